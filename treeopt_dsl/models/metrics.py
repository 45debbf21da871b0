"""How well a fitted model classifies a dataset: what ``treeopt fit`` prints, the experiment runner stores and the
benchmarks compare."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["metrics"]


def metrics(model: Any, data: Any) -> dict[str, float]:
    """Accuracy, balanced accuracy and AUC of ``model`` on ``data`` (raw features, ±1 labels)."""
    from sklearn.metrics import accuracy_score, balanced_accuracy_score, roc_auc_score  # scikit-learn: 0.5 s, paid here

    y = data.labels_of(data.y)
    pred = model.predict(data.X)
    present = np.unique(data.class_index)
    accuracy = float(accuracy_score(y, pred))
    # one class present (a test part without the rare class): balanced accuracy is that class's recall, the
    # accuracy; scikit-learn would warn about the confusion matrix's shape
    balanced = float(balanced_accuracy_score(y, pred)) if present.size > 1 else accuracy
    out = {"accuracy": accuracy, "balanced_accuracy": balanced}
    if present.size == 2 and data.n_classes == 2:
        out["auc"] = float(roc_auc_score(data.y > 0, model.predict_proba(data.X)[:, 1]))
    elif present.size == data.n_classes > 2:  # one versus rest, averaged over classes
        out["auc"] = float(roc_auc_score(data.class_index, model.predict_proba(data.X), multi_class="ovr"))
    return out
