"""The pre-commit hook (``.pre-commit-hooks.yaml``): ``batch-quota check`` on every changed topology file.

pre-commit passes several files at once; each is checked on its own and the worst exit code wins
(0 clean, 1 a rule found an error, 2 a file cannot be loaded). Files that are not topologies are
the hook's ``files:`` pattern's business, so every file given is loaded as a topology.
"""

from __future__ import annotations

import sys

from policy_engine.cli.commands.shared import EXIT_BAD_INPUT, EXIT_FINDINGS, EXIT_OK


def main(argv: list[str] | None = None) -> int:
    from policy_engine.analysis.checks import check_topology
    from policy_engine.inputs.loading import LoadError, load_topology

    worst = EXIT_OK
    for path in sys.argv[1:] if argv is None else argv:
        try:
            report = check_topology(load_topology(path))
        except LoadError as error:
            for problem in error.problems:
                print(f"error: {problem}", file=sys.stderr)
            worst = max(worst, EXIT_BAD_INPUT)
            continue
        for finding in report.findings:
            print(f"{path}: {finding.line()}")
        if not report.ok:
            worst = max(worst, EXIT_FINDINGS)
    return worst


if __name__ == "__main__":
    raise SystemExit(main())
