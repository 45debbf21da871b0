"""The tree-selection policy of a contextual tree (thesis §5.2-5.3, [aldinucci-thesis-2024] lines 1608-1635, 1653-1655).

A 3-layer ReLU network with one 0.2 dropout layer reads a (standardized) sample and gives a softmax over the
``B`` trees of the forest. Two trainings share it:

* ``"reinforce"`` (Algorithm 4, lines 1616-1631): per mini-batch, sample ``a_i ~ pi(.|x_i)``, look the reward
  ``r(a_i)`` up in the precomputed ``(n, B)`` reward matrix ((5.4) or (5.5)), and descend on
  ``L = -(1/N) sum_i [log pi(a_i|x_i) r(a_i) + lambda H(a_i|x_i)]`` with ``H = -pi(a_i|x_i) log pi(a_i|x_i)``
  (line 1612), ``lambda = 1e-4`` (line 1653);
* ``"supervised"`` (the baseline of line 1655): cross-entropy against a target tree per sample.

Both use Adam (lr 1e-3, no weight decay) with a cosine schedule stepped once per epoch and early stopping on
the validation score of the argmax tree (line 1653); the weights of the best validation epoch are kept.
Prediction picks ``argmax_k pi(k|x)`` (line 1635) with a numpy forward pass (:func:`policy_logits`), so a
fitted model needs no PyTorch.

PyTorch is imported inside :func:`train_policy` only (``pip install treeopt-dsl[contextual]``).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from treeopt_dsl.errors import OptionError, SolverNotAvailable

__all__ = ["PolicyConfig", "PolicyFit", "policy_logits", "train_policy"]

METHODS = ("reinforce", "supervised")
ENTROPIES = ("sampled", "full")


@dataclass(frozen=True)
class PolicyConfig:
    """Hyperparameters of the policy network and its training (defaults: the thesis' where it gives them)."""

    hidden: int = 128  #: width of the two hidden layers (not given by the thesis)
    dropout: float = 0.2  #: line 1653
    learning_rate: float = 1e-3  #: Adam's initial learning rate, line 1653
    entropy_weight: float = 1e-4  #: lambda of Algorithm 4, line 1653
    entropy: str = "sampled"  #: "sampled": H of the sampled action (line 1612); "full": the distribution's entropy
    epochs: int = 1000  #: the cosine schedule's length and the most epochs run
    batch_size: int = 256  #: mini-batch of Algorithm 4 (not given by the thesis)
    patience: int = 100  #: stop after this many epochs in a row without a better validation score (0: the first)
    time_limit: float | None = None  #: seconds; training stops after the epoch that passes it
    n_threads: int = 1  #: torch.set_num_threads during training
    seed: int = 0
    verbose: bool = False


@dataclass
class PolicyFit:
    """A trained policy: numpy weights ``[(W1, b1), (W2, b2), (W3, b3)]``, the input standardization, and the
    training history (one entry per epoch)."""

    weights: list[tuple[np.ndarray, np.ndarray]]
    mean: np.ndarray
    scale: np.ndarray
    history: dict[str, Any] = field(default_factory=dict)
    best_epoch: int = 0
    n_epochs: int = 0
    train_time: float = 0.0
    stopped: str = "max epochs"


def policy_logits(fit: PolicyFit, X: np.ndarray) -> np.ndarray:
    """The network's logits on ``X`` (eval mode: no dropout), by numpy in float64; ``argmax`` along axis 1 is the
    tree."""
    h = (np.asarray(X, dtype=np.float64) - fit.mean) / fit.scale
    (W1, b1), (W2, b2), (W3, b3) = fit.weights
    h = np.maximum(h @ W1.T + b1, 0.0)
    h = np.maximum(h @ W2.T + b2, 0.0)
    return h @ W3.T + b3


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        raise SolverNotAvailable("contextual trees train their policy with PyTorch: "
                                 "`pip install treeopt-dsl[contextual]` (or `pip install torch`)") from None
    return torch


def train_policy(X_train: np.ndarray, rewards: np.ndarray, X_val: np.ndarray, val_score: Callable[[np.ndarray], float],
                 config: PolicyConfig, method: str = "reinforce", labels: np.ndarray | None = None,
                 higher_is_better: bool = True) -> PolicyFit:
    """Train the policy on ``X_train`` (``n x p``) against the reward matrix ``rewards`` (``n x B``).

    ``val_score(selected_tree_per_validation_row) -> float`` scores the argmax trees on ``X_val`` after every
    epoch (accuracy, or RMSE with ``higher_is_better=False``); early stopping keeps the best epoch's weights.
    ``method="supervised"`` needs ``labels`` (``n``, target tree per sample) and trains by cross-entropy; its
    history still records the reward of the argmax trees it takes on the training batches.

    History: ``reward`` (mean reward of the actions taken in each epoch: sampled for REINFORCE), ``loss``,
    ``val_score``, ``lr``, ``selection`` (``epochs x B`` counts of the actions taken), ``time`` (seconds since
    the start of training at the end of each epoch).
    """
    if method not in METHODS:
        raise OptionError(f"method must be one of {METHODS}, got {method!r}")
    if config.entropy not in ENTROPIES:
        raise OptionError(f"entropy must be one of {ENTROPIES}, got {config.entropy!r}")
    if method == "supervised" and labels is None:
        raise OptionError("method='supervised' needs labels (the target tree of every training sample)")
    entered = time.perf_counter()  # config.time_limit counts from here: importing PyTorch (2-5 s) is part of it
    torch = _torch()
    n, B = rewards.shape
    X_train = np.asarray(X_train, dtype=np.float64)
    mean = X_train.mean(axis=0)
    scale = X_train.std(axis=0)
    scale = np.where(scale > 1e-12, scale, 1.0)
    old_threads = torch.get_num_threads()
    torch.set_num_threads(max(1, int(config.n_threads)))
    try:
        return _train(torch, X_train, rewards, np.asarray(X_val, dtype=np.float64), val_score, config, method, labels,
                      higher_is_better, mean, scale, n, B, entered)
    finally:
        torch.set_num_threads(old_threads)


def _init_layer(rng: np.random.Generator, fan_in: int, fan_out: int) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch's default ``nn.Linear`` initialization (weights and biases uniform in +-1/sqrt(fan_in)), drawn
    from numpy's PCG64 so that it is the same on every platform and PyTorch version."""
    bound = 1.0 / np.sqrt(fan_in)
    return rng.uniform(-bound, bound, (fan_out, fan_in)), rng.uniform(-bound, bound, fan_out)


def _train(torch: Any, X_train: np.ndarray, rewards: np.ndarray, X_val: np.ndarray,
           val_score: Callable[[np.ndarray], float], config: PolicyConfig, method: str, labels: np.ndarray | None,
           higher_is_better: bool, mean: np.ndarray, scale: np.ndarray, n: int, B: int,
           entered: float | None = None) -> PolicyFit:
    # Reproducibility (the same seed gives the same model on any machine, thread count or PyTorch version):
    # every random draw (initialization, shuffling, dropout masks, sampled actions) comes from numpy's PCG64,
    # whose streams numpy keeps stable across versions and platforms, never from PyTorch's generators; the
    # arithmetic is float64, so the few-ulp differences between CPU kernels (AVX2 / AVX-512, BLAS builds, thread
    # splits) stay at 1e-16 and never flip a sampled action or an argmax, which float32 did (2 of 5 seeds on
    # biodeg changed with the CPU kernels).
    rng = np.random.default_rng(int(config.seed))
    p, h = X_train.shape[1], int(config.hidden)
    params = [torch.from_numpy(np.ascontiguousarray(a)).requires_grad_()
              for fan_in, fan_out in ((p, h), (h, h), (h, B)) for a in _init_layer(rng, fan_in, fan_out)]
    W1, b1, W2, b2, W3, b3 = params
    keep = 1.0 - float(config.dropout)

    def forward(x: Any, mask: Any = None) -> Any:
        z = torch.relu(torch.relu(x @ W1.T + b1) @ W2.T + b2)
        if mask is not None:  # inverted dropout, as nn.Dropout in training mode
            z = z * mask
        return z @ W3.T + b3

    opt = torch.optim.Adam(params, lr=float(config.learning_rate), weight_decay=0.0, foreach=False)
    epochs = max(1, int(config.epochs))
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    Xt = torch.from_numpy((X_train - mean) / scale)
    Xv = torch.from_numpy((X_val - mean) / scale)
    R = np.ascontiguousarray(rewards, dtype=np.float64)
    L = torch.from_numpy(np.asarray(labels, dtype=np.int64)) if labels is not None else None
    lam, full_entropy = float(config.entropy_weight), config.entropy == "full"
    bs = max(1, int(config.batch_size))
    hist: dict[str, list[Any]] = {"reward": [], "loss": [], "val_score": [], "lr": [], "selection": [], "time": []}
    best_score, best_epoch, best_state = -np.inf, 0, None
    stopped = "max epochs"
    t0 = time.perf_counter()
    for epoch in range(epochs):
        perm = rng.permutation(n)
        counts = np.zeros(B, dtype=np.int64)
        reward_sum, loss_sum = 0.0, 0.0
        for start in range(0, n, bs):
            idx = perm[start:start + bs]
            m = idx.size
            mask = None
            if keep < 1.0:
                mask = torch.from_numpy((rng.random((m, h)) < keep) / keep)
            logp = torch.log_softmax(forward(Xt[idx], mask), dim=1)
            if method == "reinforce":
                # a_i ~ pi(.|x_i) by the inverse CDF of one uniform per row (numpy's stream, float64 probabilities)
                cdf = np.cumsum(np.exp(logp.detach().numpy()), axis=1)
                u = rng.random(m) * cdf[:, -1]
                a_np = np.minimum((cdf <= u[:, None]).sum(axis=1), B - 1)
                a = torch.from_numpy(a_np)
                lpa = logp.gather(1, a[:, None]).squeeze(1)
                r_np = R[idx, a_np]
                r = torch.from_numpy(r_np)
                if full_entropy:
                    H = -(logp.exp() * logp).sum(dim=1)
                else:  # H(a|x) = -pi(a|x) log pi(a|x) of the sampled action (line 1612, Algorithm 4 line 7)
                    H = -lpa.exp() * lpa
                loss = -(lpa * r + lam * H).mean()
            else:
                assert L is not None
                loss = torch.nn.functional.nll_loss(logp, L[torch.from_numpy(idx)])
                a_np = logp.detach().numpy().argmax(axis=1)
                r_np = R[idx, a_np]
            opt.zero_grad()
            loss.backward()
            opt.step()
            counts += np.bincount(a_np, minlength=B)
            reward_sum += float(r_np.sum())
            loss_sum += float(loss.detach()) * m
        hist["lr"].append(float(opt.param_groups[0]["lr"]))
        sched.step()
        with torch.no_grad():
            sel = forward(Xv).numpy().argmax(axis=1)
        score = float(val_score(sel))
        signed = score if higher_is_better else -score
        hist["reward"].append(reward_sum / n)
        hist["loss"].append(loss_sum / n)
        hist["val_score"].append(score)
        hist["selection"].append(counts.copy())
        hist["time"].append(time.perf_counter() - t0)
        if best_state is None or signed > best_score:
            best_score, best_epoch = signed, epoch
            best_state = [v.detach().numpy().copy() for v in params]
        if config.verbose:
            print(f"epoch {epoch + 1:5d}  reward {hist['reward'][-1]:+.4f}  validation {score:.4f}  "
                  f"(best {abs(best_score):.4f} at {best_epoch + 1})", file=sys.stderr)
        if epoch > best_epoch and epoch - best_epoch >= int(config.patience):
            stopped = "early stopping"
            break
        if config.time_limit is not None and time.perf_counter() - (t0 if entered is None else entered) >= float(
                config.time_limit):  # the limit counts from train_policy's start (PyTorch's import included)
            stopped = "time limit"
            break
    assert best_state is not None
    state = best_state
    weights = [(state[0], state[1]), (state[2], state[3]), (state[4], state[5])]
    history = {k: (np.asarray(v) if k != "selection" else np.asarray(v, dtype=np.int64).reshape(-1, B))
               for k, v in hist.items()}
    return PolicyFit(weights=weights, mean=mean, scale=scale, history=history, best_epoch=best_epoch,
                     n_epochs=len(hist["reward"]), train_time=time.perf_counter() - t0, stopped=stopped)
