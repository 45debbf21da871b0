"""Tests of ``treeopt_dsl.cli``."""
