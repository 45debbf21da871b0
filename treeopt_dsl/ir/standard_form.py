"""The standard form every backend and writer consumes, and the one-pass compiler that makes it.

    minimize    c·x + ½ xᵀQx + c0
    subject to  row_lower <= A x <= row_upper,   col_lower <= x <= col_upper,
                x_j integer where integrality[j] == 1.

``A`` is CSR with int32 indices and float64 values; ``Q`` is symmetric (or ``None``). Names are
made only on request (:meth:`StandardForm.col_names`), vectorized. After compiling, a constraint family
whose every term is a real nonzero views ``A``'s arrays (one copy of the matrix, not two); treat ``A``
as read-only, or copy it before changing it in place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from treeopt_dsl.errors import ModelError
from treeopt_dsl.ir.expr import Constraint, LinExpr, QuadExpr
from treeopt_dsl.ir.labels import Coords
from treeopt_dsl.ir.variables import Kind

if TYPE_CHECKING:  # a name for the annotations only: model.py imports this module to compile itself
    from treeopt_dsl.ir.model import Model


@dataclass(frozen=True)
class Block:
    """A family's slice of the columns or rows: ``name``, position, and its labeled shape."""

    name: str
    offset: int
    dims: tuple[str, ...]
    coords: Coords
    index: np.ndarray | None = None  # rows only: compiled row of each entry (-1 = dropped)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(len(self.coords[d]) for d in self.dims)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))


@dataclass
class StandardForm:
    A: sp.csr_matrix
    row_lower: np.ndarray
    row_upper: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    integrality: np.ndarray  # int8: 0 continuous, 1 integer
    c: np.ndarray
    c0: float = 0.0
    Q: sp.csr_matrix | None = None
    columns: list[Block] = field(default_factory=list)
    rows: list[Block] = field(default_factory=list)
    name: str = "treeopt"
    #: nonlinear objective terms (``NLExpr``), present only for NLP formulations
    nonlinear: dict = field(default_factory=dict)
    #: nonlinear constraint families (``NLConstraint``), present only for NLP formulations
    nl_constraints: dict = field(default_factory=dict)
    #: branching priorities per column (int32, higher first), ``None`` when every family has priority 0; passed on
    #: by the backends with the feature ``"priority"`` (a hint: the others solve the same model without it)
    priority: np.ndarray | None = None

    @property
    def n_cols(self) -> int:
        return self.A.shape[1]

    @property
    def n_rows(self) -> int:
        return self.A.shape[0]

    @property
    def nnz(self) -> int:
        return int(self.A.nnz)

    @property
    def is_mip(self) -> bool:
        return bool(self.integrality.any())

    @property
    def is_quadratic(self) -> bool:
        return self.Q is not None and self.Q.nnz > 0

    @property
    def problem_class(self) -> str:
        if self.nonlinear or self.nl_constraints:
            return "MINLP" if self.is_mip else "NLP"
        return ("MI" if self.is_mip else "") + ("QP" if self.is_quadratic else "LP")

    def objective(self, x: np.ndarray) -> float:
        val = float(self.c @ x + self.c0)
        if self.is_quadratic:
            val += 0.5 * float(x @ (self.Q @ x))
        for term in self.nonlinear.values():
            val += float(np.sum(term.evaluate(x)))
        return val

    def with_rows(self, A: sp.spmatrix, lower: np.ndarray, upper: np.ndarray, name: str = "cuts") -> StandardForm:
        """A copy with the rows ``lower <= A x <= upper`` appended (named ``name_k``), e.g. lazy cuts made
        explicit for a solver without a lazy-constraint callback. The columns and objective are shared."""
        from dataclasses import replace

        A = sp.csr_matrix(A, dtype=np.float64)
        if A.shape[1] != self.n_cols:
            raise ModelError(f"the new rows have {A.shape[1]} columns, the model {self.n_cols}")
        k = A.shape[0]
        block = Block(name, self.n_rows, ("cut",), {"cut": np.arange(k)})
        AA = sp.vstack([self.A, A], format="csr")
        AA.indices = AA.indices.astype(np.int32, copy=False)
        AA.indptr = AA.indptr.astype(np.int32 if AA.nnz < 2**31 else np.int64, copy=False)
        return replace(self, A=AA, row_lower=np.concatenate([self.row_lower, np.asarray(lower, dtype=float)]),
                       row_upper=np.concatenate([self.row_upper, np.asarray(upper, dtype=float)]),
                       rows=[*self.rows, block])

    def col_names(self) -> np.ndarray:
        return _names(self.columns, self.n_cols)

    def row_names(self) -> np.ndarray:
        return _names(self.rows, self.n_rows)

    def summary(self) -> dict[str, int | str]:
        return {"n_variables": self.n_cols, "n_constraints": self.n_rows, "n_nonzeros": self.nnz,
                "n_integer": int(self.integrality.sum()), "problem_class": self.problem_class}


def _names(blocks: list[Block], n: int) -> np.ndarray:
    """``family_i_j`` for each entry (indices, not labels: labels may hold characters no format accepts)."""
    out = np.empty(n, dtype=object)
    for b in blocks:
        idx = np.indices(b.shape).reshape(len(b.shape), -1) if b.shape else np.zeros((0, 1), dtype=int)
        names = np.full(idx.shape[1], b.name, dtype=object)
        for k in range(idx.shape[0]):
            names = names + "_" + idx[k].astype(str).astype(object)
        if b.index is None:
            out[b.offset:b.offset + b.size] = names
        else:
            keep = b.index >= 0
            out[b.index[keep]] = names[keep.ravel()] if names.shape != keep.shape else names[keep]
    return out


def compile_model(model: Model) -> StandardForm:
    """Flatten every family into CSR in one vectorized pass (no Python loop per row or nonzero)."""
    n = model.n_vars
    if n >= np.iinfo(np.int32).max:
        raise ModelError(f"{n} columns exceed the int32 index range of the standard form")
    fams = list(model.variables.values())
    col_lower = np.concatenate([f.lower.ravel() for f in fams]) if fams else np.zeros(0)
    col_upper = np.concatenate([f.upper.ravel() for f in fams]) if fams else np.zeros(0)
    integrality = np.concatenate(
        [np.full(f.size, f.kind is not Kind.CONTINUOUS, dtype=np.int8) for f in fams]) if fams else np.zeros(0, np.int8)
    columns = [Block(f.name, f.offset, f.dims, f.coords) for f in fams]
    priority = np.concatenate([np.full(f.size, f.priority, dtype=np.int32) for f in fams]) \
        if any(f.priority for f in fams) else None

    indptr_parts, index_parts, data_parts, lo_parts, up_parts, rows = [np.zeros(1, np.int64)], [], [], [], [], []
    shared: list[tuple[Constraint, int]] = []  # dense families whose terms the CSR arrays hold as they are
    n_rows = 0
    nnz = 0
    for con in model.constraints.values():
        e = con.expr
        size, T = con.size, e.n_terms
        lo, up = con.lower.reshape(size), con.upper.reshape(size)
        keep = ~(np.isneginf(lo) & np.isposinf(up))
        all_kept = bool(keep.all())
        coef = e.coef.reshape(size, T) if all_kept else e.coef.reshape(size, T)[keep]  # no copy when all rows stay
        var = e.vars.reshape(size, T) if all_kept else e.vars.reshape(size, T)[keep]
        # every term a real nonzero (checked without a mask): the arrays are the CSR rows as they are
        dense = var.size == 0 or (bool(coef.all()) and int(var.min()) >= 0)
        valid = None if dense else (var >= 0) & (coef != 0.0)
        k = int(keep.sum())
        row_index = np.full(size, -1, dtype=np.int64)
        row_index[keep] = n_rows + np.arange(k)
        if T > 1 and not e.distinct and _has_duplicates(var, valid):  # distinct: known to hold no repeats
            if valid is None:
                valid = np.ones(var.shape, dtype=bool)
            r = np.broadcast_to(np.arange(k)[:, None], var.shape)[valid]
            m = sp.csr_matrix((coef[valid], (r, var[valid])), shape=(k, n))
            m.sum_duplicates()
            m.eliminate_zeros()
            counts, idx, dat = np.diff(m.indptr), m.indices, m.data
        elif valid is None:
            counts, idx, dat = np.full(k, T), var.ravel(), coef.ravel()
            if all_kept and T:
                shared.append((con, nnz))
        else:
            counts, idx, dat = valid.sum(1), var[valid], coef[valid]
        indptr_parts.append(nnz + np.cumsum(counts))
        nnz += int(counts.sum())
        index_parts.append(idx)
        data_parts.append(dat)
        lo_parts.append(lo[keep])
        up_parts.append(up[keep])
        rows.append(Block(con.name or "c", n_rows, con.dims, con.coords, row_index.reshape(con.shape)))
        n_rows += k
    if nnz >= np.iinfo(np.int32).max:
        raise ModelError(f"{nnz} nonzeros exceed the int32 index range of the standard form")
    indptr = np.concatenate(indptr_parts).astype(np.int32)
    indices = np.concatenate(index_parts).astype(np.int32, copy=False) if index_parts else np.zeros(0, np.int32)
    data = np.concatenate(data_parts).astype(np.float64, copy=False) if data_parts else np.zeros(0)
    A = sp.csr_matrix((data, indices, indptr), shape=(n_rows, n))
    for con, start in shared:  # the family's terms become views of the CSR arrays (equal values): the
        e = con.expr  # model no longer holds a second copy of the matrix, e.g. while a solver loads it
        end = start + e.coef.size
        con.expr = LinExpr(e.dims, e.coords, data[start:end].reshape(e.coef.shape),
                           indices[start:end].reshape(e.coef.shape), e.const, distinct=e.distinct, rep=e.rep,
                           fams=e.fams)
    row_lower = np.concatenate(lo_parts) if lo_parts else np.zeros(0)
    row_upper = np.concatenate(up_parts) if up_parts else np.zeros(0)

    c = np.zeros(n)
    c0 = 0.0
    qi, qj, qv = [], [], []
    for term in model.objective.values():
        lin = term.lin if isinstance(term, QuadExpr) else term
        ok = lin.vars >= 0
        c += np.bincount(lin.vars[ok], weights=lin.coef[ok], minlength=n)
        c0 += float(np.sum(lin.const))
        if isinstance(term, QuadExpr):
            okq = (term.qi >= 0) & (term.qj >= 0) & (term.qcoef != 0)
            qi.append(term.qi[okq])
            qj.append(term.qj[okq])
            qv.append(term.qcoef[okq])
    Q = None
    if qv and sum(len(v) for v in qv):
        P = sp.coo_matrix((np.concatenate(qv), (np.concatenate(qi), np.concatenate(qj))), shape=(n, n)).tocsr()
        Q = (P + P.T).tocsr()  # sum q x_i x_j  ==  ½ xᵀ(P + Pᵀ)x
        Q.sum_duplicates()
        Q.eliminate_zeros()
        Q.indices = Q.indices.astype(np.int32)
        Q.indptr = Q.indptr.astype(np.int32)
    # one reading pass: a NaN or inf anywhere makes the sum non-finite (a finite overflow only sends
    # us to the exact test)
    if not np.isfinite(data.sum()) and not np.all(np.isfinite(data)):
        raise ModelError("the constraint matrix contains NaN or inf coefficients")
    return StandardForm(A, row_lower, row_upper, col_lower, col_upper, integrality, c, c0, Q, columns, rows,
                        model.name, dict(model.nonlinear), dict(model.nl_constraints), priority)


def _has_duplicates(var: np.ndarray, valid: np.ndarray | None) -> bool:
    s = np.sort(var if valid is None else np.where(valid, var, -1), axis=1)
    return bool(np.any((s[:, 1:] == s[:, :-1]) & (s[:, 1:] >= 0)))
