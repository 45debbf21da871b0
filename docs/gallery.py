"""The gallery of pictures (docs/gallery.md): every entry's code is what the page shows and what this script runs.

Regenerate the images (docs/img/gallery/NAME.png) and the page::

    python docs/gallery.py                 # every entry (a few minutes on a busy 2-core machine)
    python docs/gallery.py tree_oblique    # some entries
    python docs/gallery.py --page          # only docs/gallery.md, from ENTRIES

tests/models/test_viz.py draws every entry (so a broken picture fails) and checks that docs/gallery.md is the page
this file writes. Each entry's code ends with the figure in ``fig``; it runs in a fresh namespace with matplotlib's
backend left as it is (the pictures never switch it).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import textwrap
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
IMG = HERE / "img" / "gallery"
PAGE = HERE / "gallery.md"
DPI = 80


@dataclass(frozen=True)
class Entry:
    """One picture: ``name`` (its file name), a ``title``, a sentence on what it shows, and the code drawing it."""

    name: str
    title: str
    about: str
    code: str
    slow: bool = False  #: more than ~10 s: drawn by the test suite's slow run only

    @property
    def source(self) -> str:
        return textwrap.dedent(self.code).strip()


ENTRIES: tuple[Entry, ...] = (
    Entry("tree_oblique", "An oblique tree (OLCT)", """
Every split is a hyperplane. Its terms are printed one a line, largest first, on the standardized features the
model was fitted on (the title says so), so a coefficient tells how much its feature matters; the terms left out
are summed up with their largest size. A side no sample can take (behind a constant node) is a grey, dashed
`unreachable` box. `plot(units="raw")` prints the coefficients on the raw features instead.""", """
import numpy as np
from sklearn.datasets import load_breast_cancer
from treeopt_dsl.estimator import OptimalTreeClassifier

X, y = load_breast_cancer(return_X_y=True, as_frame=True)
X, y = X.iloc[::5, :10], np.where(y[::5] == 1, "benign", "malignant")
clf = OptimalTreeClassifier(formulation="olct", depth=2, time_limit=10).fit(X, y)
fig = clf.result_.model.plot()
""", slow=True),
    Entry("tree_multiclass", "A multiclass tree (OCT, leaf classes)", """
Axis-aligned splits in the features' units; each leaf shows its class and the training weight of every class.""",
          """
import numpy as np
from sklearn.datasets import load_iris
from treeopt_dsl.estimator import OptimalTreeClassifier

X, y = load_iris(return_X_y=True, as_frame=True)
y = np.array(["setosa", "versicolor", "virginica"])[y]
clf = OptimalTreeClassifier(formulation="oct", depth=2, time_limit=20).fit(X, y)
fig = clf.result_.model.plot()
"""),
    Entry("tree_one_vs_rest", "More classes than a formulation takes: one tree per class", """
A binary formulation (OLCT) on three classes fits one tree per class against the rest; the estimator's `plot()`
draws them one above the other.""", """
import numpy as np
from sklearn.datasets import load_iris
from treeopt_dsl.estimator import OptimalTreeClassifier

X, y = load_iris(return_X_y=True, as_frame=True)
y = np.array(["setosa", "versicolor", "virginica"])[y]
clf = OptimalTreeClassifier(formulation="olct", depth=1, time_limit=10).fit(X.iloc[::3], y[::3])
fig = clf.plot()
""", slow=True),
    Entry("tree_sklearn", "The same tree drawn by scikit-learn", """
`to_sklearn()` turns an axis-aligned tree into a fitted `DecisionTreeClassifier`, so scikit-learn's own
`plot_tree` (and `export_text`, `export_graphviz`) draw it.""", """
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_iris
from sklearn.tree import plot_tree
from treeopt_dsl.estimator import OptimalTreeClassifier

X, y = load_iris(return_X_y=True, as_frame=True)
y = np.array(["setosa", "versicolor", "virginica"])[y]
clf = OptimalTreeClassifier(formulation="oct", depth=2, time_limit=20).fit(X, y)
fig, ax = plt.subplots(figsize=(7, 3.5))
plot_tree(clf.to_sklearn(), feature_names=list(X.columns), class_names=list(clf.classes_), filled=True,
          fontsize=7, ax=ax)
"""),
    Entry("sorct", "A randomized tree (S-ORCT)", """
A node sends a sample left with probability `F(s (u - c))`: the box shows the rule `u >= c` and the steepness `s`;
the leaves show the class probabilities.""", """
import numpy as np
from sklearn.datasets import load_breast_cancer
from treeopt_dsl.estimator import RandomizedTreeClassifier

X, y = load_breast_cancer(return_X_y=True, as_frame=True)
X, y = X.iloc[::5, :10], np.where(y[::5] == 1, "benign", "malignant")
clf = RandomizedTreeClassifier(depth=1, n_starts=2, time_limit=20).fit(X, y)
fig = clf.result_.model.plot()
"""),
    Entry("tmo", "A memetic tree (TMO)", """
TMO and TAO trees are `DecisionTree`s; their `plot()` shows the training samples of each class in every leaf.""",
          """
import numpy as np
from sklearn.datasets import load_breast_cancer
from treeopt_dsl.estimator import TMOClassifier

X, y = load_breast_cancer(return_X_y=True, as_frame=True)
y = np.where(y == 1, "benign", "malignant")
fig = TMOClassifier(depth=2, n_trees=6, n_generations=2, random_state=0).fit(X, y).plot()
"""),
    Entry("tao", "A tree improved by alternating optimization (TAO)", "", """
import numpy as np
from sklearn.datasets import load_breast_cancer
from treeopt_dsl.estimator import TAOClassifier

X, y = load_breast_cancer(return_X_y=True, as_frame=True)
y = np.where(y == 1, "benign", "malignant")
fig = TAOClassifier(depth=2, random_state=0).fit(X, y).plot()
"""),
    Entry("born_again", "A born-again tree", """
The smallest tree that classifies every point of the feature space as a random forest does; its leaves show the
training samples of each class (a leaf with none is a region of the space no training sample lies in).""", """
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier
from treeopt_dsl.bornagain.estimator import BornAgainClassifier

X, y = load_breast_cancer(return_X_y=True, as_frame=True)
X, y = X[["mean radius", "mean concave points", "worst radius"]], np.where(y == 1, "benign", "malignant")
forest = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0)
fig = BornAgainClassifier(forest, objective="depth-leaves").fit(X, y).plot()
"""),
    Entry("decision_tree", "Any axis-aligned tree: `DecisionTree`", """
A `DecisionTree` (here read from a scikit-learn tree) draws its leaves with the samples of `X` (and `y`) that
reach them.""", """
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.tree import DecisionTreeClassifier
from treeopt_dsl.models.decision_tree import DecisionTree

X, y = load_breast_cancer(return_X_y=True, as_frame=True)
y = np.where(y == 1, "benign", "malignant")
cart = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
tree = DecisionTree.from_sklearn(cart, feature_names=list(X.columns))
fig = tree.plot(X=X.to_numpy(), y=y)
"""),
    Entry("categorical", "A categorical tree", """
Set tests on a categorical feature (`colour in {0, 2}`) beside ordinary cuts; leaves with the training counts.""",
          """
import numpy as np
import pandas as pd
from treeopt_dsl.estimator import CategoricalTreeClassifier

rng = np.random.default_rng(0)
X = pd.DataFrame({"colour": rng.integers(0, 4, 120), "weight": rng.normal(size=120)})
y = np.where(X["colour"].isin([0, 2]) & (X["weight"] < 0.5), "edible", "poisonous")
clf = CategoricalTreeClassifier(shape="2", categorical_features=["colour"], time_limit=30).fit(X, y)
fig = clf.tree_.plot()
"""),
    Entry("risk_score", "A risk score (ORS)", """
The points of every rule beside the predicted risk of every total score.""", """
import numpy as np
from sklearn.datasets import load_breast_cancer
from treeopt_dsl.estimator import RiskScoreClassifier

X, y = load_breast_cancer(return_X_y=True, as_frame=True)
X, y = X.iloc[::5, :10], np.where(y[::5] == 1, "benign", "malignant")
clf = RiskScoreClassifier(T=3, time_limit=20).fit(X, y)
fig = clf.result_.model.plot()
""", slow=True),
    Entry("score_card", "A hand-scorable score card", """
`card()` turns the fitted score into a card of 0/1 conditions in the data's units, to print, export or plot.""",
          """
import numpy as np
from sklearn.datasets import load_breast_cancer
from treeopt_dsl.estimator import RiskScoreClassifier

X, y = load_breast_cancer(return_X_y=True, as_frame=True)
X, y = X.iloc[::5, :10], np.where(y[::5] == 1, "benign", "malignant")
clf = RiskScoreClassifier(T=3, binarize="quantile", time_limit=5).fit(X, y)
fig = clf.card().plot()
""", slow=True),
    Entry("reliability", "Calibration: a reliability diagram", """
How often the positive class occurs against the probability the score predicts, per equal-mass bin, with the
expected calibration error (`plot_reliability`; `treeopt fit ors --calibration-plot FILE.png`).""", """
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split
from treeopt_dsl.estimator import RiskScoreClassifier

X, y = load_breast_cancer(return_X_y=True, as_frame=True)
X_train, X_test, y_train, y_test = train_test_split(X.iloc[:, :10], y, test_size=0.3, stratify=y, random_state=0)
clf = RiskScoreClassifier(T=3, binarize="quantile", time_limit=10).fit(X_train, y_train)
fig = clf.plot_reliability(X_test, y_test)
""", slow=True),
    Entry("path", "A regularization path (S-ORCT)", """
Local and global sparsity and accuracy along the path of `lambda_L`, as the S-ORCT paper's Figures 2-3
(`treeopt path --plot`).""", """
from treeopt_dsl.datasets import load
from treeopt_dsl.formulations.sorct import run_path
from treeopt_dsl.starts.multistart import plot_path

path, train, test = run_path("sorct", load("iris", multiclass=True), [0.0, 0.05, 0.2],
                             params={"depth": 2, "gamma": 32}, n_starts=2, fresh=1)
fig = plot_path(path)
"""),
    Entry("report_time", "A performance profile from an experiment's results", """
`treeopt experiment report` (or `write_report`) draws Dolan-More performance profiles and cumulative gaps from the
results store alone; `profile_figure` gives one of them as a figure. One step line per method, each with its own
marker and dash, so coincident lines stay visible.""", """
from treeopt_dsl.experiments import ResultStore, expand, parse_grid, run_tasks
from treeopt_dsl.experiments.report import profile_figure

grid = '''
[experiment]
name = "gallery"
time_limit = 10.0
[data]
datasets = ["haberman", "heart", "wholesale"]
seeds = [0, 1]
sample = 30
[[method]]
formulation = "olct"
params = { depth = 1 }
[[method]]
name = "olct-cbc"
formulation = "olct"
solver = "cbc"
params = { depth = 1 }
[[method]]
formulation = "oct"
params = { depth = 1 }
'''
with ResultStore("gallery.sqlite") as store:
    run_tasks(expand(parse_grid(grid)), store, progress=False)
    rows = store.rows()
fig = profile_figure(rows, "time")
"""),
    Entry("report_objective", "Objectives compared within each formulation", """
The cumulative gap of the objective: one panel per formulation, since two formulations' objectives are different
functions (`rows` as above).""", """
from treeopt_dsl.experiments import ResultStore
from treeopt_dsl.experiments.report import profile_figure

with ResultStore("gallery.sqlite") as store:  # the store of the entry above
    rows = store.rows()
fig = profile_figure(rows, "objective")
"""),
    Entry("contextual_training", "Training a contextual tree", """
The reward per epoch above and, below, which trees the policy chose in each epoch (the thesis' Figure 5.2).""",
          """
from sklearn.datasets import load_breast_cancer
from treeopt_dsl.contextual import ContextualTreeClassifier

X, y = load_breast_cancer(return_X_y=True)
clf = ContextualTreeClassifier(n_trees=10, epochs=30, patience=30, random_state=0).fit(X, y)
fig = clf.plot_training(title="breast cancer")
""", slow=True),
)


def draw(entry: Entry, workdir: str | Path | None = None) -> Any:
    """Run ``entry``'s code in a fresh namespace, in ``workdir`` (default: the current directory; the files an
    entry writes land there); returns its ``fig``."""
    ns: dict[str, Any] = {"__name__": f"gallery_{entry.name}"}
    with contextlib.chdir(workdir or "."), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. "not proven optimal within the time limit": the picture is the point
        exec(compile(entry.source, f"<gallery {entry.name}>", "exec"), ns)  # our own code
    if "fig" not in ns:
        raise RuntimeError(f"gallery entry {entry.name!r} does not leave its figure in `fig`")
    return ns["fig"]


def save(fig: Any, path: Path, dpi: float = DPI) -> Path:
    """Write ``fig`` as PNG to ``path`` atomically (a temporary file moved into place)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".png")
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=dpi, format="png")
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def page() -> str:
    """docs/gallery.md: every entry's picture under the code that draws it."""
    out = ["# Gallery", "",
           "Every picture the library draws, with the code that draws it. The images are made by",
           "`docs/gallery.py` (`python docs/gallery.py` regenerates them and this page); `tests/models/test_viz.py`",
           "draws every entry, so a broken picture fails the tests. Every `plot()` returns a",
           "`matplotlib.figure.Figure` (`fig.savefig(...)`; in a notebook it shows inline) and never switches",
           "matplotlib's backend. Tree pictures also exist as Graphviz text: `model.to_dot()` (render with",
           "`dot -Tpng`). The entries run in order in one directory (the objective entry reads the store the",
           "profile entry wrote).", "",
           "More pictures in context: the [notebooks](notebooks/index.md), executed, with their outputs and",
           "pictures (`docs/notebooks.py` runs them; they are stored with their outputs in `notebooks/`, so GitHub",
           "shows them too).", ""]
    for e in ENTRIES:
        out += [f"## {e.title}", ""]
        if e.about.strip():
            out += [" ".join(e.about.split()), ""]
        out += ["```python", e.source, "```", "", f"![{e.title}](img/gallery/{e.name}.png)", ""]
    return "\n".join(out)


def write_page(path: Path = PAGE) -> Path:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "w") as fh:
        fh.write(page())
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("names", nargs="*", help="entries to draw (default: all)")
    ap.add_argument("--page", action="store_true", help="write docs/gallery.md only")
    ap.add_argument("--out", type=Path, default=IMG, help="image directory (default docs/img/gallery)")
    args = ap.parse_args(argv)
    write_page()
    if args.page:
        return 0
    known = {e.name: e for e in ENTRIES}
    unknown = [n for n in args.names if n not in known]
    if unknown:
        ap.error(f"unknown entries {unknown}; known: {', '.join(known)}")
    import matplotlib.pyplot as plt

    work = tempfile.mkdtemp(prefix="gallery.")  # the files the entries write (a results store)
    for e in [known[n] for n in args.names] or ENTRIES:
        fig = draw(e, work)
        print(save(fig, args.out / f"{e.name}.png"), flush=True)
        plt.close(fig)
    return 0


if __name__ == "__main__":
    sys.exit(main())
