"""``treeopt formulations | solvers | datasets``: what the library can do here."""

from __future__ import annotations

import argparse

from treeopt_dsl.backends import available_routes
from treeopt_dsl.cli.common import print_json
from treeopt_dsl.datasets import list_datasets
from treeopt_dsl.formulations import REGISTRY


def cmd_formulations(args: argparse.Namespace) -> int:
    rows = [cls.describe() for cls in REGISTRY.values()]
    if args.json:
        print_json({"formulations": rows})
        return 0
    for r in rows:
        print(f"{r['name']}: {r['summary']}")
        for p in r["params"]:
            allowed = f" [{p['range']}]" if p["range"] else ""
            print(f"    {p['name']:<14} default {p['default']!s:<10} {p['help']}{allowed}")
    return 0


def cmd_solvers(args: argparse.Namespace) -> int:
    rows = available_routes()  # the MILP/NLP routes, then the exact engines (axis-aligned 0-1 trees)
    if args.json:
        print_json({"solvers": rows})
        return 0
    print(f"{'solver':<8} {'backend':<8} {'installed':<10} {'problem classes':<22} {'features':<50} extra")
    for r in rows:
        print(f"{r['solver']:<8} {r['backend']:<8} {'yes' if r['installed'] else 'no':<10} "
              f"{','.join(r['problem_classes']):<22} {','.join(r['features']):<50} [{r['extra']}]")
    return 0


def cmd_datasets(args: argparse.Namespace) -> int:
    rows = list_datasets(args.data_dir)
    if args.json:
        print_json({"datasets": rows})
        return 0
    for r in rows:
        print(f"{r['name']:<28} {r['n_rows']!s:>7} x {r['n_features']!s:<5} {r['task']:<10} {r['source']:<9} "
              f"{r.get('title', '')}")
    return 0


def run(args: argparse.Namespace) -> int:
    """``treeopt formulations``, ``solvers`` or ``datasets``."""
    return {"formulations": cmd_formulations, "solvers": cmd_solvers, "datasets": cmd_datasets}[args.command](args)
