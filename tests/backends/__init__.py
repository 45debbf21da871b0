"""Tests of ``treeopt_dsl.backends``."""
