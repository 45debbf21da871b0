"""Tests of ``treeopt_dsl.exact``."""
