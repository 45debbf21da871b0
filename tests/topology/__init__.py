"""Tests of ``treeopt_dsl.topology``."""
