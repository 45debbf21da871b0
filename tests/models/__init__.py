"""Tests of ``treeopt_dsl.models``."""
