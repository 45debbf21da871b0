"""Tests of ``treeopt_dsl.io`` (the folder is ``io_``: ``io`` is the standard library's name on ``sys.path``)."""
