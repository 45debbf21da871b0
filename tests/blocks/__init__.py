"""Tests of ``treeopt_dsl.blocks``."""
