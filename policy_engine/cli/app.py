"""The ``batch-quota`` command line.

Exit codes, shared by every sub-command (``commands/shared.py``): 0 fine, 1 a rule found an error,
2 the input cannot be loaded or the command is misused (click's usage errors
already exit 2). Users never see a traceback: ``LoadError`` becomes one line
per problem on stderr.
"""

from __future__ import annotations

import errno
import gc
import importlib
import os
import sys
from typing import Any

import click

from policy_engine.cli.commands.shared import EXIT_BAD_INPUT, KEPT_UNTIL_EXIT

#: Errors writing the output that are the reader's or the disk's doing, not the command's.
_OUTPUT_ERRNOS = {errno.EPIPE, errno.ENOSPC, errno.EFBIG, errno.EIO, getattr(errno, "EDQUOT", errno.ENOSPC)}


def _silence_stdout() -> None:
    """After a failed write to stdout, point it at /dev/null so the interpreter's final flush cannot fail again."""
    stdout = sys.stdout
    if stdout is not sys.__stdout__ or stdout is None:
        return  # in-process (tests, CliRunner): nothing will flush the real stream
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def command_table(*rows: tuple[str, str, str]) -> dict[str, tuple[str, str]]:
    """``(name, module, one-line help)`` rows as ``name -> (module, help)``; a name given twice is refused."""
    table: dict[str, tuple[str, str]] = {}
    for name, module, text in rows:
        if name in table:
            raise ValueError(f"command {name!r} registered twice ({table[name][0]} and {module})")
        table[name] = (module, text)
    return table


#: ``name -> (module, one-line help)``. Modules load only when their command runs, so
#: ``batch-quota check`` does not pay for the simulator's or matplotlib's imports.
COMMANDS: dict[str, tuple[str, str]] = command_table(
    ("check", "policy_engine.cli.commands.check", "Check a topology before deploy."),
    ("diff", "policy_engine.cli.commands.diff", "What a topology change does: per team, guarantees, deploy hazards."),
    ("explain", "policy_engine.cli.commands.explain", "Explain one share to its team in plain sentences."),
    ("graph", "policy_engine.cli.commands.graph", "Draw the borrow graph (.svg, .png, .dot)."),
    ("simulate", "policy_engine.cli.commands.simulate", "Replay a workload scenario against a topology."),
    ("sweep", "policy_engine.cli.commands.sweep", "Replay a scenario against every combination of varied fields."),
    ("tune", "policy_engine.cli.commands.tune", "Search varied fields for the best topology (optuna)."),
    ("compare", "policy_engine.cli.commands.compare", "Run designs side by side on one workload, per share."),
    ("generate", "policy_engine.cli.commands.generate", "Write a synthetic workload (CSV or JSON Lines)."),
    ("fit", "policy_engine.cli.commands.fit", "Fit a per-team workload profile from a job file or history."),
    ("walkthrough", "policy_engine.cli.commands.walkthrough", "Replay AWS's three-step quota example."),
    ("import", "policy_engine.cli.commands.import_topology", "Import an account's (or a template's) quota shares."),
    ("drift", "policy_engine.cli.commands.drift", "Compare the account with a topology, field by field."),
    ("snapshot", "policy_engine.cli.commands.snapshot", "Write a live queue's jobs as a scenario to simulate."),
    ("history", "policy_engine.cli.commands.history",
     "Write a queue's jobs as a workload CSV, with --scenario a replay."),
    ("iam-policy", "policy_engine.cli.commands.iam_policy", "Print the read-only IAM policy these commands need."),
    ("serve", "policy_engine.cli.commands.serve", "Serve a local AWS Batch endpoint backed by the simulator."),
    ("top", "policy_engine.cli.commands.top", "Watch a live queue per share: use, borrowing, waiting, head jobs."),
)


class _LazyGroup(click.Group):
    """A click group that imports a sub-command's module on first use.

    It also turns a failed write of the output (a closed pipe as in ``| head``, a full disk as
    ``/dev/full``) into one line and exit 2 instead of a traceback.
    """

    def main(self, *args: Any, **kwargs: Any) -> Any:
        """Click's own usage errors (a bad option value, a missing argument) as one line, like every other bad
        input: ``error: Invalid value for '--format': ...  (batch-quota simulate --help)``, exit 2."""
        standalone = kwargs.pop("standalone_mode", True)
        self.console = not args and "args" not in kwargs  # the ``batch-quota`` process itself, reading sys.argv
        try:
            returned = super().main(*args, standalone_mode=False, **kwargs)  # type: ignore[call-overload]
        except click.UsageError as error:
            if not standalone:
                raise
            where = error.ctx.command_path if error.ctx is not None else "batch-quota"
            click.echo(f"error: {error.format_message()} (see {where} --help)", err=True)
            sys.exit(error.exit_code)
        except click.ClickException as error:
            if not standalone:
                raise
            error.show()
            sys.exit(error.exit_code)
        except click.Abort:
            if not standalone:
                raise
            click.echo("Aborted!", err=True)
            sys.exit(1)
        if not standalone:
            return returned
        sys.exit(returned if isinstance(returned, int) else 0)  # as click's standalone mode ends (--help: 0)

    def invoke(self, ctx: click.Context) -> Any:
        if sys.stdout is None:  # started with stdout closed (``>&-``)
            click.echo("error: standard output is closed; redirect it to a file or /dev/null instead", err=True)
            raise SystemExit(EXIT_BAD_INPUT)
        code: int | None = None
        try:
            try:
                returned = super().invoke(ctx)
            except SystemExit as stop:  # a command's own exit (1 for findings): ended here too if it kept a run
                if not ctx.meta.get(KEPT_UNTIL_EXIT) or not (stop.code is None or isinstance(stop.code, int)):
                    raise
                code = stop.code or 0
            finally:
                sys.stdout.flush()
        except OSError as error:
            _silence_stdout()
            what = "cannot write the output" if error.errno in _OUTPUT_ERRNOS else "input/output error"
            where = f" ({error.filename})" if error.filename else ""
            click.echo(f"error: {what}{where}: {error.strerror or error}", err=True)
            raise SystemExit(EXIT_BAD_INPUT) from None
        if ctx.meta.get(KEPT_UNTIL_EXIT):  # the output is out: the process ends without freeing the run it kept
            sys.stderr.flush()
            os._exit(code if code is not None else returned if isinstance(returned, int) else 0)
        return returned

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module = importlib.import_module(COMMANDS[cmd_name][0])
        if getattr(self, "console", False):
            # What start-up loaded lives until the process exits: frozen, the cyclic collector never scans it again
            # (a full pass over it costs ``check`` about 17 ms). In-process callers (tests, CliRunner) are left alone.
            gc.freeze()
        return module.command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """List commands from ``COMMANDS`` without importing every module for ``--help``."""
        with formatter.section("Commands"):
            formatter.write_dl([(name, text) for name, (_, text) in COMMANDS.items()])


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="batch-quota")
def main() -> None:
    """Define, check, simulate and deploy AWS Batch quota shares."""
