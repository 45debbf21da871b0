"""Text columns, one rule for every face: a text column is a categorical feature, one-hot encoded.

The command line does it when it reads a CSV file (:func:`treeopt_dsl.datasets.frames.frame_to_dataset`); the
estimators take numbers only, as scikit-learn's, and refuse a text column naming it and this transformer, which
encodes a DataFrame exactly as the command line does:

* a column is text when its values do not all read as numbers (:func:`~treeopt_dsl.datasets.frames.looks_numeric`);
* each text column becomes one 0/1 column per level seen by ``fit``, named ``column=level``, in place of the column
  (the other columns keep their order), levels in text order after stripping spaces;
* at ``transform``, a level ``fit`` did not see is all zeros (no split of that column sends it right).

>>> import pandas as pd
>>> df = pd.DataFrame({"age": [30, 50, 40], "color": ["red", "blue", "red"], "n": [1.0, 2.0, 3.0]})
>>> enc = OneHotText().fit(df)
>>> enc.get_feature_names_out().tolist()
['age', 'color=blue', 'color=red', 'n']
>>> enc.transform(pd.DataFrame({"age": [1], "color": ["green"], "n": [0.0]})).to_numpy().tolist()
[[1.0, 0.0, 0.0, 0.0]]
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from treeopt_dsl.datasets.frames import looks_numeric
from treeopt_dsl.errors import DataError

__all__ = ["OneHotText"]


def _levels(col: pd.Series) -> list[str]:
    """The sorted levels of a text column (as the command line's loader: stripped text)."""
    return sorted(set(col.dropna().astype(str).str.strip()))


class OneHotText(TransformerMixin, BaseEstimator):
    """One-hot encode the text columns of a DataFrame as ``treeopt fit --data FILE.csv`` does (module doc).

    ``make_pipeline(OneHotText(), OptimalTreeClassifier(...))`` fits on a DataFrame with text columns and names the
    tree's features ``column=level``. Numeric input (an array, or a DataFrame without text) passes through.

    Parameters
    ----------
    None; the fitted attributes are ``feature_names_in_`` (the input columns), ``text_levels_`` (column -> its
    levels) and ``n_features_in_``.
    """

    def fit(self, X: Any, y: Any = None) -> OneHotText:
        """Record the text columns of ``X`` and their levels."""
        frame = self._frame(X)
        self.feature_names_in_ = np.asarray([str(c) for c in frame.columns], dtype=object)
        self.n_features_in_ = frame.shape[1]
        self.text_levels_ = {str(c): _levels(frame[c]) for c in frame.columns if not looks_numeric(frame[c])}
        return self

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """``column`` for a numeric column, ``column=level`` for each level of a text column."""
        check_is_fitted(self, "text_levels_")
        names: list[str] = []
        for c in self.feature_names_in_:
            names += [f"{c}={lv}" for lv in self.text_levels_[c]] if c in self.text_levels_ else [c]
        return np.asarray(names, dtype=object)

    def transform(self, X: Any) -> Any:
        """The encoded floats, columns as :meth:`get_feature_names_out`: a DataFrame with those names for a DataFrame
        (so that the estimator after it prints ``color=red``), else an array."""
        check_is_fitted(self, "text_levels_")
        frame = self._frame(X)
        if not isinstance(X, pd.DataFrame) and frame.shape[1] == self.n_features_in_:
            frame.columns = list(self.feature_names_in_)  # an array: its columns by position
        cols = [str(c) for c in frame.columns]
        if cols != list(self.feature_names_in_):
            raise DataError(f"OneHotText was fitted on the columns {list(self.feature_names_in_)[:20]}, got "
                            f"{cols[:20]}")
        frame.columns = cols
        blocks = []
        for c in cols:
            if c in self.text_levels_:
                values = frame[c].astype(str).str.strip().to_numpy(dtype=object)
                levels = np.asarray(self.text_levels_[c], dtype=object)
                blocks.append((values[:, None] == levels[None, :]).astype(np.float64))
            else:
                try:
                    blocks.append(pd.to_numeric(frame[c]).to_numpy(dtype=np.float64)[:, None])
                except (TypeError, ValueError):
                    raise DataError(f"column {c!r} was numeric when OneHotText was fitted and holds text now") from None
        out = np.hstack(blocks) if blocks else np.zeros((frame.shape[0], 0))
        if isinstance(X, pd.DataFrame):
            return pd.DataFrame(out, columns=self.get_feature_names_out(), index=X.index)
        return out

    @staticmethod
    def _frame(X: Any) -> pd.DataFrame:
        if isinstance(X, pd.DataFrame):
            return X.copy()
        arr = np.asarray(X)
        if arr.ndim != 2:
            raise DataError(f"X must be two-dimensional (samples x features), got shape {arr.shape}")
        return pd.DataFrame(arr, columns=[f"x{j}" for j in range(arr.shape[1])])
