"""Tests of ``treeopt_dsl.contextual``."""
