"""Tests of ``treeopt_dsl.starts``."""
