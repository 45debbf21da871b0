"""Tests of ``treeopt_dsl.estimator``."""
