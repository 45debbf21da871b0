"""The bundled dataset: scikit-learn's copy of Breast Cancer Wisconsin (Diagnostic), WDBC.

It needs no data directory, so examples and tests run anywhere scikit-learn is installed.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from treeopt_dsl.data import Dataset

BUNDLED: dict[str, dict[str, Any]] = {
    "breast-cancer": {"name": "breast-cancer", "title": "Breast Cancer Wisconsin (Diagnostic), scikit-learn's copy",
                      "n_rows": 569, "n_features": 30, "task": "binary", "source": "bundled", "n_classes": 2,
                      "positive": "+1 = malignant, -1 = benign", "variants": []},
}


def breast_cancer() -> Dataset:
    """WDBC, 569 x 30, malignant = +1 (212 rows), benign = -1 (357 rows); scikit-learn's feature names.

    scikit-learn codes malignant as 0 and benign as 1; here the event of interest (malignant) is
    +1, as in the manifest's ``breast`` entry (the same data from UCI's ``wdbc.data``).
    """
    from sklearn.datasets import load_breast_cancer

    raw = load_breast_cancer()
    names = [str(n) for n in raw.target_names]  # ['malignant', 'benign'], indexed by the 0/1 target
    labels = np.asarray(names, dtype=object)[raw.target]
    d = Dataset.from_arrays(raw.data, labels, feature_names=[str(f) for f in raw.feature_names],
                            positive="malignant", name="breast-cancer")
    meta = {"source": "scikit-learn sklearn.datasets.load_breast_cancer (bundled)",
            "positive": "+1 = malignant, -1 = benign (scikit-learn's target 0 = malignant)",
            "title": BUNDLED["breast-cancer"]["title"], "license": "UCI CC BY 4.0, via scikit-learn (BSD-3)",
            "task": "binary", "variant": None, "dropped_missing": 0, "n_original_features": d.n_features}
    return replace(d, groups=tuple(range(d.n_features)), meta=meta)
