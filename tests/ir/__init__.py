"""Tests of ``treeopt_dsl.ir``."""
