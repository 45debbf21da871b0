"""Tests of ``treeopt_dsl.bornagain``."""
