"""``rla diff RUN_A RUN_B``: the hyper-parameters that differ, last metrics, the code diff."""

from __future__ import annotations

import argparse
import json
from typing import Any, Dict, List

from RLA.fs import json_default
from rla_scripts.commands._common import add_data_root, resolve_data_root


def render(result: Dict[str, Any]) -> str:
    """Human-readable text of :func:`RLA.run_diff.compare_runs`."""
    a, b = result["runs"][:2]
    lines: List[str] = [f"--- {a}", f"+++ {b}"]
    if result["params"]:
        lines.append("hyper-parameters that differ:")
        for key, values in result["params"].items():
            lines.append(f"  {key}: {values[0]!r} -> {values[1]!r}")
    else:
        lines.append("hyper-parameters: identical")
    if result["metrics"]:
        lines.append("last metrics:")
    for metric, values in result["metrics"].items():
        lines.append(f"  last({metric}): {values[0]} -> {values[1]}")
    lines.append("code:" if result["code_diff"] else "code: identical snapshots")
    text = "\n".join(lines)
    return text + ("\n" + result["code_diff"].rstrip("\n") if result["code_diff"] else "")


def run(args: argparse.Namespace) -> int:
    from RLA.layout import find_run
    from RLA.run_diff import compare_runs

    data_root = resolve_data_root(args.data_root)
    runs = [
        find_run(data_root, sel, task=args.task, archived=args.archived) for sel in (args.run_a, args.run_b)
    ]
    result = compare_runs(runs)
    print(json.dumps(result, indent=2, default=json_default) if args.format == "json" else render(result))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "diff",
        help="compare two runs (parameters, metrics, code)",
        description="Show the hyper-parameters that differ between two runs, "
        "their last metrics and the unified diff of their code "
        "snapshots.",
    )
    parser.add_argument("run_a", metavar="RUN_A", help="run index or unique prefix/glob")
    parser.add_argument("run_b", metavar="RUN_B", help="run index or unique prefix/glob")
    add_data_root(parser)
    parser.add_argument("--task", help="task (when the runs have none)")
    parser.add_argument("--archived", action="store_true", help="look under arc/")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.set_defaults(func=run)
