"""Tests of ``treeopt_dsl.datasets``."""
