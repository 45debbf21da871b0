"""Tests of ``treeopt_dsl.formulations``."""
