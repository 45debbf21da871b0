"""Every estimator class the package exports goes through scikit-learn's ``check_estimator`` somewhere in the suite
(issue 35, "Done when"): a new estimator without it fails here, naming it."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from sklearn.base import BaseEstimator

import treeopt_dsl.bornagain
import treeopt_dsl.contextual
import treeopt_dsl.estimator

TESTS = Path(__file__).resolve().parents[1]
#: abstract bases, exported for subclassing (no estimator of their own)
BASES = {"SolvedClassifier"}


def _exported() -> set[str]:
    out = set()
    for mod in (treeopt_dsl.estimator, treeopt_dsl.contextual, treeopt_dsl.bornagain):
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.isclass(obj) and issubclass(obj, BaseEstimator) and name not in BASES:
                out.add(name)
    return out


def test_every_exported_estimator_is_checked() -> None:
    exported = _exported()
    assert {"OptimalTreeClassifier", "RandomizedTreeClassifier", "BornAgainClassifier",
            "ContextualTreeRegressor"} <= exported
    checked = set()
    call = re.compile(r"(?:check_estimator|parametrize_with_checks)\(\s*\[?\s*(?:est|(\w+)\()", re.S)
    for path in TESTS.rglob("test_*.py"):
        text = path.read_text(encoding="utf-8")
        checked |= {m.group(1) for m in call.finditer(text) if m.group(1)}
        for m in re.finditer(r'parametrize\("est", \[(.*?)\]', text, re.S):  # check_estimator(est) over a list
            if "check_estimator(est" in text:
                checked |= set(re.findall(r"(\w+Classifier|\w+Regressor)\(", m.group(1)))
    assert exported - checked == set(), f"no check_estimator for {sorted(exported - checked)}"
