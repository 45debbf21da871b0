"""Issue 35: categorical trees take text and pandas-category columns (levels encoded inside ``fit``, their names
printed), the refusal of a mixed column no longer recommends the estimator that refuses it, and the born-again tree
of a DataFrame prints its column names."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from treeopt_dsl.bornagain.estimator import BornAgainClassifier
from treeopt_dsl.errors import DataError
from treeopt_dsl.estimator import CategoricalTreeClassifier, OptimalTreeClassifier

COLORS = ["red", "green", "blue", "amber"]


def colors(n: int = 120, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    color = rng.choice(COLORS, n)
    size = np.round(rng.normal(size=n), 3)
    y = np.where(np.isin(color, ["red", "amber"]) ^ (size > 0.3), "yes", "no")
    return pd.DataFrame({"color": color, "size": size}), y


@pytest.fixture(scope="module")
def by_hand():
    """The same data with the colors coded by hand (sorted levels) and declared categorical: the reference."""
    df, y = colors()
    codes = df.assign(color=np.searchsorted(sorted(COLORS), df["color"]).astype(float))
    return CategoricalTreeClassifier(shape="2", categorical_features=["color"], time_limit=30).fit(codes, y), codes


@pytest.mark.parametrize("kind", ["text", "category", "numpy"])
def test_text_and_category_columns_are_categorical(kind, by_hand):
    ref, codes = by_hand
    df, y = colors()
    X = {"text": df, "category": df.assign(color=df["color"].astype("category")),
         "numpy": df.to_numpy(dtype=object)}[kind]
    clf = CategoricalTreeClassifier(shape="2", time_limit=30).fit(X, y)
    assert np.array_equal(clf.predict(X), ref.predict(codes))
    assert clf.result_.objective == pytest.approx(ref.result_.objective)
    text = clf.explain()
    name = "color" if kind != "numpy" else "x0"
    assert f"{name} in {{" in text and "amber" in text and not any(f"{{{k}" in text for k in "0123")
    assert list(clf.text_levels_.values()) == [tuple(sorted(COLORS))]
    # an unseen color is in no subset: it takes every "not in S" branch, as a code no level has
    new = pd.DataFrame({"color": ["violet"], "size": [0.0]})
    if kind == "numpy":
        new = new.to_numpy(dtype=object)
    unseen = pd.DataFrame({"color": [-1.0], "size": [0.0]})
    assert clf.predict(new)[0] == ref.predict(unseen)[0]


def test_a_mixed_column_is_refused_with_advice_that_applies():
    df, y = colors(40)
    mixed = df.assign(color=[1.5 if i % 7 == 0 else c for i, c in enumerate(df["color"])])
    with pytest.raises(DataError, match=r"'color'.*strings only.*astype") as err:
        CategoricalTreeClassifier(shape="1", time_limit=10).fit(mixed, y)
    assert "use CategoricalTreeClassifier" not in str(err.value)
    with pytest.raises(DataError, match=r"'color'.*CategoricalTreeClassifier, which takes text"):
        OptimalTreeClassifier(depth=1).fit(df, y)


def test_born_again_tree_of_a_dataframe_prints_its_columns():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.integers(0, 6, size=(240, 3)).astype(float), columns=["age", "dose", "weight"])
    y = np.where(X["age"] + X["dose"] > 5, "yes", "no")
    clf = BornAgainClassifier().fit(X, y)
    text = clf.tree_.text()
    assert "age <=" in text and "dose <=" in text and "x0" not in text and "x1" not in text
    assert np.array_equal(clf.predict(X), clf.forest_.predict(X.to_numpy()))
