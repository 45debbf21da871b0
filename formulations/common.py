"""Parameters shared by the tree formulations (thesis §3.2 settings, [aldinucci-thesis-2024] line 610)."""

from __future__ import annotations

from treeopt_dsl.formulations.spec import Param, boolean, floats, number_or, optional_float
from treeopt_dsl.topology import MAX_DEPTH


def optional_bound(text: str) -> float | str | None:
    """``none``, ``auto`` or a number."""
    return text if text == "auto" else optional_float(text)


def tree_params(*, big_m: object = 100.0, w_bound: object = None, b_bound: object = None,
                C: object = 1.0, split_columns: bool = False) -> tuple[Param, ...]:
    """depth, big-M, eps, bounds, scaling, C and the split's columns with the given defaults."""
    return (
        Param("depth", 2, int, "number of branching levels d", minimum=1, maximum=MAX_DEPTH),
        Param("C", C, floats, "loss weight C_h: one number, or one per level ('0.1,1')", minimum=0.0),
        Param("big_m", big_m, number_or("derived"), "big-M of (3.7) and the loss rows: a number, or 'derived' per row",
              minimum=0.0, exclusive=True),
        Param("eps", 1e-5, float, "gap of the strict forwarding inequality (3.7b)", minimum=0.0, exclusive=True),
        Param("w_bound", w_bound, optional_float, "|w_jt| <= w_bound (none: free)", minimum=0.0, exclusive=True),
        Param("b_bound", b_bound, optional_bound, "|b_t| <= b_bound (none: free; auto: w_bound * max ||x_i||_1 + 1)"),
        Param("scaling", "standard", str, "feature scaling fitted on training data: standard | minmax | none"),
        Param("split_columns", split_columns, boolean,
              "a column v[i,t] = w_t x_i + b_t per sample and node, so the rows using it are sparse (same model)"),
    )
