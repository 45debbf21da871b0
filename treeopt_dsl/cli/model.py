"""``treeopt compile``: build a formulation on data, report its size, write it as .lp / .mps, bound its relaxation."""

from __future__ import annotations

import argparse
import time

from treeopt_dsl.cli.common import check_paths, data_info, formulation_params, load_data, print_json, write_model_file
from treeopt_dsl.formulations import get_formulation
from treeopt_dsl.solve import relaxation_bound


def run(args: argparse.Namespace) -> int:
    """``treeopt compile``."""
    spec = get_formulation(args.formulation, **formulation_params(args))
    check_paths(args)
    data = load_data(args, spec)
    t = time.perf_counter()
    built = spec.build(data)
    sf = built.compile()
    compile_s = time.perf_counter() - t
    out = {"formulation": spec.name, "params": spec.values, "data": data_info(data), **sf.summary(),
           "compile_s": round(compile_s, 4), **write_model_file(built, args.output, names=not args.no_names)}
    if args.lp_bound:
        out.update(relaxation_bound(sf).to_dict())
    if args.json:
        print_json(out)
    else:  # --quiet: the summary line alone (compile prints no progress and no model text)
        print(f"{spec.name} on {data.name} ({data.n_samples} x {data.n_features}): {sf.n_cols} variables "
              f"({out['n_integer']} integer), {sf.n_rows} constraints, {sf.nnz} nonzeros, {sf.problem_class}; "
              f"built and compiled in {compile_s:.3f} s")
        if args.output and not args.quiet:
            print(f"wrote {out['output']} in {out['write_s']:.3f} s")
        if args.lp_bound and not args.quiet:
            print(f"{'LP' if sf.problem_class.endswith('LP') else 'QP'} relaxation bound {out['lp_bound']:.6g} "
                  f"({out['lp_bound_status']}, HiGHS, {out['lp_bound_s']:.2f} s)")
    return 0
