"""Tests of ``treeopt_dsl.experiments``."""
