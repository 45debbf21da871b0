"""The exact-tree peers, run in their own environment (``.venv-exact``, made by ``peer_envs.py``) on a case the
benchmark writes: ``python exact_peers.py CASE.npz OUT.json``.

The case holds the (scaled) continuous features ``X``, the exact 0/1 binarization ``Z`` of them (every midpoint cut;
absent when too large), the class codes ``y``, the depth and the time limit. Each peer fits a depth-``d`` tree
minimizing the training errors (no penalty per split) and reports its errors on the training data, the median of
its wall times over ``repeats`` fits (one when a fit takes over two seconds), and whether it proved optimality:

* ConTree (``pycontree``, Brița et al. AAAI-25) and pytrees-rs' ConTree on ``X``;
* STreeD (``pystreed``), DL8.5 (``pydl8.5``), pytrees-rs' DL8.5 and GOSDT (``gosdt``, depth budget d + 1, a
  regularization so small that all leaves together cost less than one error) on ``Z``;
* CART (scikit-learn, ``max_depth=d``) on ``X``, for the errors a heuristic leaves.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
import warnings

import numpy as np

warnings.simplefilter("ignore")


def timed(fit, repeats: int) -> tuple[object, float]:
    times, model = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        model = fit()
        times.append(time.perf_counter() - t)
        if times[-1] > 2.0:
            break
    return model, statistics.median(times)


def run(name: str, fit, predict, X, y, repeats: int) -> dict:
    try:
        model, s = timed(fit, repeats)
        pred = np.asarray(predict(model, X)).ravel()
        return {"peer": name, "errors": int(np.sum(pred != y)), "s": s, **proof(name, model)}
    except Exception as exc:  # a peer that fails or runs out of memory is reported, not fatal
        return {"peer": name, "errors": None, "s": None, "proven": False, "note": f"{type(exc).__name__}: {exc}"[:200]}


def proof(name: str, model) -> dict:
    if name == "ConTree":
        return {"proven": bool(model._config.is_within_time_limit())}
    if name == "STreeD":
        return {"proven": bool(model.fit_result.is_optimal())}
    if name == "DL8.5":
        return {"proven": not bool(getattr(model, "timeout_", False))}
    if name == "GOSDT":
        return {"proven": str(getattr(model, "result_", None) and model.result_.status).endswith("OPTIMAL")}
    return {"proven": None}


def main() -> int:
    case = np.load(sys.argv[1])
    X, y, d, limit = case["X"], case["y"].astype(np.int32), int(case["depth"]), float(case["time_limit"])
    Z = case["Z"] if "Z" in case.files else None
    repeats = int(case["repeats"])
    rows = []
    from pycontree import ConTree

    rows.append(run("ConTree", lambda: ConTree(max_depth=d, time_limit=limit).fit(X, y), lambda m, A: m.predict(A),
                    X, y, repeats))
    try:
        import pytrees

        rows.append(run("pytrees ConTree", lambda: pytrees.ConTreeClassifier(max_depth=d, max_time=limit).fit(X, y),
                        lambda m, A: m.predict(A), X, y, repeats))
    except ImportError:
        pass
    from sklearn.tree import DecisionTreeClassifier

    rows.append(run("CART", lambda: DecisionTreeClassifier(max_depth=d, random_state=0).fit(X, y),
                    lambda m, A: m.predict(A), X, y, repeats))
    if Z is not None:
        from pystreed import STreeDClassifier

        rows.append(run("STreeD", lambda: STreeDClassifier(max_depth=d, time_limit=limit).fit(Z, y),
                        lambda m, A: m.predict(A), Z, y, repeats))
        from pydl85 import DL85Classifier

        rows.append(run("DL8.5", lambda: DL85Classifier(max_depth=d, time_limit=int(limit)).fit(Z, y),
                        lambda m, A: m.predict(A), Z, y, repeats))
        try:
            import pytrees

            rows.append(run("pytrees DL8.5", lambda: pytrees.DL85Classifier(max_depth=d, max_time=limit).fit(Z, y),
                            lambda m, A: m.predict(A), Z, y, repeats))
        except ImportError:
            pass
        if len(np.unique(y)) == 2 and Z.shape[1] <= 2000:
            from gosdt import GOSDTClassifier

            reg = 1.0 / (len(y) * 2.0 ** (d + 1))  # all 2^d leaves cost under one error: the error optimum
            rows.append(run("GOSDT", lambda: GOSDTClassifier(regularization=reg, allow_small_reg=True,
                                                             depth_budget=d + 1, time_limit=int(limit)).fit(Z, y),
                            lambda m, A: m.predict(A), Z, y, 1))
    with open(sys.argv[2], "w") as fh:
        json.dump(rows, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
