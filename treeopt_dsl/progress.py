"""Live solve progress: incumbent, bound and gap as they move.

Two sources feed the same :class:`ProgressEvent`: the solvers' own callbacks (HiGHS' MIP interrupt and
improving-solution callbacks, Gurobi's ``MIP``/``MIPSOL`` callback, a SCIP event handler on best solutions
and solved nodes: ``solve(..., progress=callable)``, see :meth:`~treeopt_dsl.backends.base.Run.report`), and,
on the routes without callbacks, the solver's log read line by line (:func:`log_progress`,
:func:`parse_progress`).

:class:`Progress` shows them: a log sink (``log_callback=``) and an event sink (:meth:`Progress.event`) that
keeps the latest incumbent/bound/gap, calls an optional Python callback when they change, echoes the raw log
to a file or a stream on request, and draws a tqdm bar of the gap closed (on a terminal, or a widget in a
notebook); on a stream that is neither, a plain line at most every ``interval`` seconds, and at :meth:`Progress.close`
the last state when a change came after the last line (the last line printed is never stale).

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

from treeopt_dsl.result import relative_gap

_NUM = r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|inf)"
#: HiGHS' MIP table: ... BestBound BestSol Gap | Cuts InLp Confl. | LpIters Time
_HIGHS = re.compile(rf"^\s*\S?\s+\d+\s+\d+\s+\d+\s+[\d.]+%\s+({_NUM})\s+({_NUM})\s+({_NUM}%|inf|Large)\s+"
                    rf"\d+\s+\d+\s+\d+\s+\d+\s+([\d.]+)s\s*$")


#: Gurobi's node log: Expl Unexpl | Obj Depth IntInf | Incumbent BestBd Gap | It/Node Time
_GUROBI = re.compile(rf"^\s*[H*]?\s*\d+\s+\d+\s+.*?\s(-|{_NUM})\s+({_NUM})\s+({_NUM}%|-)\s+\S+\s+(\d+)s\s*$")


#: the line :func:`treeopt_dsl.lazy.row_generation` logs after every round (the best completed tree, the bound)
_ROWGEN = re.compile(rf"^treeopt row generation: round \d+ rows \d+ best ({_NUM}) bound ({_NUM}|-) time ([\d.]+)s\s*$")

#: the line :func:`treeopt_dsl.starts.multistart.solve_from` logs after every start of a multistart
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


@dataclass(frozen=True)
class ProgressEvent:
    """The incumbent and bound of a running solve (``None``: none yet), the relative gap, the solver's seconds,
    and where they were read: ``"callback"`` (the solver's own callback), ``"log"`` (its log) or ``"start"`` (the
    warm start the solve was given, sent once before the solver runs)."""

    incumbent: float | None
    bound: float | None
    gap: float | None
    time_s: float
    source: str


def warn_callback_failed(exc: BaseException, stacklevel: int = 2) -> None:
    """The warning for a ``progress`` callback that raised: it is not called again and the solve goes on (the
    backends' callbacks and the start's event both say it this way)."""
    import warnings

    warnings.warn(f"the progress callback raised {exc!r}; it was not called again (the solve went on)",
                  RuntimeWarning, stacklevel=stacklevel + 1)


def log_progress(progress: Callable[[ProgressEvent], Any], log_callback: Callable[[str], Any] | None = None,
                 offset: float = 0.0) -> Callable[[str], None]:
    """A log sink that turns the lines :func:`parse_progress` reads into :class:`ProgressEvent` (``source="log"``)
    for ``progress`` when the incumbent or the bound moved, then passes every message on to ``log_callback``.
    ``offset`` is added to both numbers (the objective's constant, for a route whose solver does not see it).

    >>> seen = []
    >>> sink = log_progress(seen.append)
    >>> sink("H    0     0                       4.9767887    4.96727  0.19%     -    0s")
    >>> seen[0].incumbent, seen[0].source
    (4.9767887, 'log')
    """
    last: list[tuple[float | None, float | None]] = []

    def sink(message: str) -> None:
        for line in message.splitlines():
            got = parse_progress(line)
            if got is not None and (not last or last[-1] != got[:2]):
                last[:] = [got[:2]]
                inc, bound, gap, secs = got
                inc = None if inc is None else inc + offset
                bound = None if bound is None else bound + offset
                gap = gap if not offset or inc is None or bound is None else relative_gap(inc, bound)
                progress(ProgressEvent(inc, bound, gap, float(secs or 0.0), "log"))
        if log_callback is not None:
            log_callback(message)

    return sink


def _in_notebook() -> bool:
    """Whether this process is a notebook's kernel (not merely a process that imported ``ipykernel``, as a test
    that runs notebooks does)."""
    if "ipykernel" not in sys.modules:
        return False
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


@dataclass
class Progress:
    """A log and event sink that tracks and shows the solve's progress."""

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
    _bar: Any = None
    _pending: bool = False  # a change not yet written as a plain line (it came within ``interval`` of the last)

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

    def event(self, ev: ProgressEvent) -> None:
        """One :class:`ProgressEvent` (from a solver callback): update, call back, draw."""
        changed = (ev.incumbent, ev.bound) != (self.incumbent, self.bound)
        self.incumbent = ev.incumbent if ev.incumbent is not None else self.incumbent
        self.bound = ev.bound if ev.bound is not None else self.bound
        self.gap = ev.gap if ev.gap is not None else self.gap
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
        if tty or _in_notebook():  # a tqdm bar: the share of the gap closed, the numbers beside it
            if self._bar is None:
                from tqdm.auto import tqdm

                self._bar = tqdm(total=100, file=self.stream, leave=True, dynamic_ncols=True,
                                 bar_format="{desc} {percentage:3.0f}% closed |{bar}| {elapsed} {postfix}",
                                 desc="solve")
            closed = 0.0 if self.gap is None else 100.0 * max(0.0, 1.0 - min(1.0, self.gap))
            self._bar.n = round(closed, 1)
            self._bar.set_postfix_str(self.line().split("] ", 1)[-1], refresh=False)
            self._bar.refresh()
            self._drawn = True
        elif changed and now - self._last_draw >= self.interval:
            self.stream.write(self.line() + "\n")
            self._last_draw = now
            self._pending = False
        elif changed:  # too soon after the last line: written by the next one, or by close()
            self._pending = True

    def close(self) -> None:
        """End the live bar (call after the solve); on a plain stream, write the last state when the last line
        written is older than it (a change within ``interval`` of the line before is not left unshown)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        elif self._pending and self.stream is not None and not self.echo:
            self.stream.write(self.line() + "\n")
            self._last_draw = time.perf_counter()
        self._pending = False
        self._drawn = False
