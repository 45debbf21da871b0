"""The training plot of a contextual tree, like the thesis' Figure 5.2 ([aldinucci-thesis-2024] line 1702): the reward
per
epoch above, the tree-selection histograms per epoch below (one column per epoch, one row per tree, the
colour the share of the epoch's actions that chose the tree).

    >>> fig = clf.plot_training(title="spambase")      # doctest: +SKIP
    >>> fig.savefig("training.png")                     # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

import numpy as np

from treeopt_dsl.errors import TreeoptError

__all__ = ["plot_training"]


def plot_training(history: dict[str, Any], title: str | None = None, best_epoch: int | None = None,
                  figsize: tuple[float, float] = (8.0, 6.0), top: int = 5) -> Any:
    """Figure of ``history`` (an estimator's ``history_``): mean training reward and validation score per
    epoch (above), selection histograms (below, the ``top`` most chosen trees of the last epoch named on the
    axis). Returns the matplotlib Figure (``pip install treeopt-dsl[plot]``)."""
    try:
        import matplotlib.pyplot as plt  # matplotlib's own backend: never switched here (a notebook's stays inline)
    except ImportError:
        raise TreeoptError("plotting needs matplotlib: `pip install treeopt-dsl[plot]`") from None
    reward = np.asarray(history["reward"], dtype=float)
    sel = np.asarray(history["selection"], dtype=float)
    epochs = np.arange(1, reward.size + 1)
    fig, (ax_r, ax_h) = plt.subplots(2, 1, figsize=figsize, sharex=True, gridspec_kw={"height_ratios": [1, 1.4]})
    ax_r.plot(epochs, reward, lw=1, color="tab:blue", label="mean reward of the actions taken (training)")
    tops = [ax_r]
    if "val_score" in history:
        ax_v = ax_r.twinx()
        tops.append(ax_v)
        ax_v.plot(epochs, np.asarray(history["val_score"], dtype=float), lw=1, color="tab:orange",
                  label="validation score of the argmax tree")
        ax_v.set_ylabel("validation", color="tab:orange")
        lines = ax_r.get_lines() + ax_v.get_lines()
        ax_r.legend(lines, [str(ln.get_label()) for ln in lines], loc="lower right", fontsize=7)
    if best_epoch is not None:
        ax_r.axvline(best_epoch + 1, color="0.5", ls="--", lw=0.8)
    ax_r.set_ylabel("reward")
    ax_r.set_title(title or "contextual tree: training")
    share = sel / np.maximum(sel.sum(axis=1, keepdims=True), 1.0)
    im = ax_h.imshow(share.T, aspect="auto", origin="lower", interpolation="nearest", cmap="viridis",
                     extent=(0.5, reward.size + 0.5, -0.5, sel.shape[1] - 0.5))
    ax_h.set_ylabel("tree")
    ax_h.set_xlabel("epoch")
    if sel.shape[0]:
        most = np.argsort(-sel[-1])[:top]
        ax_h.set_yticks(sorted(most.tolist()))
    fig.colorbar(im, ax=ax_h, label="share of the epoch's selections", pad=0.01)
    fig.tight_layout()
    box_h = ax_h.get_position()  # the colorbar narrowed the lower panel: line the upper one up with it
    for ax in tops:
        box = ax.get_position()
        ax.set_position((box_h.x0, box.y0, box_h.width, box.height))
    return fig
