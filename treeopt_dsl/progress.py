"""Live solve progress: incumbent, bound and gap read from the solver's log as they move.

:class:`Progress` is a log sink (``log_callback=``) that every backend feeds line by line. It keeps
the latest incumbent/bound/gap, calls an optional Python callback when they change, echoes the raw
log to a file or a stream on request, and draws a status line on a terminal (``\\r``-updated on a
TTY; a plain line at most every ``interval`` seconds otherwise).

>>> p = Progress(stream=None)
>>> p(" L       0       0         0   0.00%   9.0965     13.516       32.70%   519  31  0   323     1.3s")
>>> p.incumbent, p.bound, round(p.gap, 4)
(13.516, 9.0965, 0.327)
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

_NUM = r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|inf)"
#: HiGHS' MIP table: ... BestBound BestSol Gap | Cuts InLp Confl. | LpIters Time
_HIGHS = re.compile(rf"^\s*\S?\s+\d+\s+\d+\s+\d+\s+[\d.]+%\s+({_NUM})\s+({_NUM})\s+({_NUM}%|inf|Large)\s+"
                    rf"\d+\s+\d+\s+\d+\s+\d+\s+([\d.]+)s\s*$")


#: Gurobi's node log: Expl Unexpl | Obj Depth IntInf | Incumbent BestBd Gap | It/Node Time
_GUROBI = re.compile(rf"^\s*[H*]?\s*\d+\s+\d+\s+.*?\s(-|{_NUM})\s+({_NUM})\s+({_NUM}%|-)\s+\S+\s+(\d+)s\s*$")


#: the line :func:`treeopt_dsl.lazy.row_generation` logs after every round (the best completed tree, the bound)
_ROWGEN = re.compile(rf"^treeopt row generation: round \d+ rows \d+ best ({_NUM}) bound ({_NUM}|-) time ([\d.]+)s\s*$")

#: the line :func:`treeopt_dsl.multistart.solve_from` logs after every start of a multistart
_MULTI = re.compile(rf"^treeopt multistart: start \d+/\d+ \S+ objective \S+ best ({_NUM}|-) time ([\d.]+)s\s*$")


def parse_progress(line: str) -> tuple[float | None, float | None, float | None, float | None] | None:
    """``(incumbent, bound, gap, seconds)`` from one line of HiGHS' or Gurobi's MIP log (or of a
    multistart), or ``None``.

    >>> parse_progress("H    0     0                       4.9767887    4.96727  0.19%     -    0s")
    (4.9767887, 4.96727, 0.0019, 0.0)
    """
    m = _HIGHS.match(line)
    if m:
        bound, inc, gap, secs = m.groups()
        return _f(inc), _f(bound), _pct(gap), float(secs)
    m = _GUROBI.match(line)
    if m:
        inc, bound, gap, secs = m.groups()
        return _f(inc), _f(bound), _pct(gap), float(secs)
    m = _ROWGEN.match(line)
    if m:
        best, bound, secs = m.groups()
        inc, bnd = _f(best), (None if bound == "-" else _f(bound))
        gap = None if inc is None or bnd is None else abs(inc - bnd) / max(abs(inc), 1e-10)
        return inc, bnd, gap, float(secs)
    m = _MULTI.match(line)
    if m:  # a local NLP solver has no bound: the best objective over the starts so far
        best, secs = m.groups()
        return _f(best), None, None, float(secs)
    return None


def _f(text: str) -> float | None:
    try:
        v = float(text)
    except ValueError:
        return None
    return v if abs(v) != float("inf") else None


def _pct(text: str) -> float | None:
    return _f(text[:-1]) / 100 if text.endswith("%") and _f(text[:-1]) is not None else None


@dataclass
class Progress:
    """A log sink that tracks and shows the solve's progress."""

    stream: IO[str] | None = field(default_factory=lambda: sys.stderr)
    log_file: IO[str] | None = None
    echo: bool = False  # copy the raw solver log to ``stream``
    callback: Callable[[float | None, float | None, float | None, float], Any] | None = None
    interval: float = 5.0
    incumbent: float | None = None
    bound: float | None = None
    gap: float | None = None
    _t0: float = field(default_factory=time.perf_counter)
    _last_draw: float = 0.0
    _drawn: bool = False

    def __call__(self, message: str) -> None:
        if self.log_file is not None:
            self.log_file.write(message if message.endswith("\n") else message + "\n")
        if self.echo and self.stream is not None:
            self.stream.write(message if message.endswith("\n") else message + "\n")
        for line in message.splitlines():
            got = parse_progress(line)
            if got is None:
                continue
            inc, bound, gap, _ = got
            changed = (inc, bound) != (self.incumbent, self.bound)
            self.incumbent = inc if inc is not None else self.incumbent
            self.bound = bound if bound is not None else self.bound
            self.gap = gap if gap is not None else self.gap
            if changed and self.callback is not None:
                self.callback(self.incumbent, self.bound, self.gap, self.elapsed)
            self._draw(changed)

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self._t0

    def line(self) -> str:
        def num(v: float | None) -> str:
            return "-" if v is None else f"{v:.6g}"

        gap = "-" if self.gap is None else f"{100 * self.gap:.2f}%"
        return f"[{self.elapsed:7.1f}s] incumbent {num(self.incumbent)}  bound {num(self.bound)}  gap {gap}"

    def _draw(self, changed: bool) -> None:
        if self.stream is None or self.echo:
            return
        now = time.perf_counter()
        tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        if tty:
            self.stream.write("\r" + self.line() + "  ")
            self.stream.flush()
            self._drawn = True
        elif changed and now - self._last_draw >= self.interval:
            self.stream.write(self.line() + "\n")
            self._last_draw = now

    def close(self) -> None:
        """End the live line (call after the solve)."""
        if self._drawn and self.stream is not None:
            self.stream.write("\n")
            self._drawn = False
