"""What every sub-command shares: the exit codes, one line per input problem, and click types that refuse
what the standard ones let through.

Kept apart from ``policy_engine.cli.app`` (which loads the commands by name), so a command never imports
the group that loads it.
"""

from __future__ import annotations

import gc
import inspect
import math
import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

if TYPE_CHECKING:
    from policy_engine.foundation.model import Topology
    from policy_engine.simulation.scenarios.workload import Scenario
    from policy_engine.sweep.executor import Executor

    #: An option type whose value is seconds. click types ``ParamType`` by its value from 8.4 on; the lower bound
    #: (8.1) cannot subscript it at run time, so only the type checker sees the argument.
    SecondsParamType = click.ParamType[float]
else:
    SecondsParamType = click.ParamType

EXIT_OK, EXIT_FINDINGS, EXIT_BAD_INPUT = 0, 1, 2

#: The one rule for Python topology modules (README, "Reading files"): a ``.py`` named on the command line as the
#: topology, a file of the working tree, loads as ``cdk synth`` runs ``app.py``; one reached another way (named
#: inside a scenario, a ``compare`` design, ``diff REF:PATH`` from another git revision) needs ``--allow-python``.
RUNS_CODE = "A Python topology (.py) runs its code when it is loaded: load only modules you trust."


def python_topologies(flag_for: str | None = None) -> Callable[[click.Command], click.Command]:
    """Put the rule in a command's ``--help``; with ``flag_for`` (what the flag lets name a ``.py``), add
    ``--allow-python``, passed to the command as ``allow_python``. Applied above ``@click.command``."""

    def apply(command: click.Command) -> click.Command:
        needs = f" A .py topology {flag_for} needs --allow-python." if flag_for else ""
        # cleandoc first: an unindented paragraph appended to an indented docstring would stop click's own
        # cleandoc from removing the indentation (the help printed its paragraphs indented, lines gapped)
        command.help = f"{inspect.cleandoc(command.help or '')}\n\n{RUNS_CODE}{needs}"
        if flag_for:
            command.params.append(click.Option(["--allow-python"], is_flag=True,
                                               help=f"Load a Python topology module {flag_for} (it runs its code)."))
        return command

    return apply


#: ``click`` context ``meta`` key of what a one-shot run keeps alive until its process ends (``keep_until_exit``).
KEPT_UNTIL_EXIT = "batch_quota.kept_until_exit"


def keep_until_exit(*objects: object) -> None:
    """Hold ``objects`` (a run's jobs and results) until the ``batch-quota`` process ends, which then ends with
    ``os._exit`` once its output is flushed (``app._LazyGroup.invoke``): freeing a million-job run's objects one by one
    costs over a second of CPU for nothing. What lives until then is frozen (``gc.freeze``): the cyclic collector,
    paused over the run (``gc_paused``), would otherwise walk the million jobs once, about 0.5 to 1 s, the moment it
    is on again. In-process callers (tests, CliRunner) hold and freeze nothing and exit as usual."""
    context = click.get_current_context(silent=True)
    if context is None:
        return
    root = context.find_root()
    if getattr(root.command, "console", False):
        root.meta.setdefault(KEPT_UNTIL_EXIT, []).extend(objects)
        gc.freeze()


def fail_input(problems: list[str]) -> NoReturn:
    """Print every problem on its own line and exit 2."""
    from policy_engine.reports.kit.safe_text import visible  # only on the way out

    for problem in problems:
        click.echo(f"error: {visible(problem)}", err=True)
    raise SystemExit(EXIT_BAD_INPUT)


def scenario_or_exit(path: str, allow_python: bool = False) -> Scenario:
    """Load the scenario at ``path``, exiting 2 on bad input (every problem, one line each)."""
    from policy_engine.inputs.loading import LoadError
    from policy_engine.simulation.scenarios.workload import load_scenario

    try:
        return load_scenario(path, allow_python=allow_python)
    except LoadError as error:
        fail_input(error.problems)


def executor_or_exit(scheduler: str | None, workers: int | None) -> Executor:
    """``--scheduler``/``--workers`` opened (``sweep.executor.open_executor``), exiting 2 when they cannot be."""
    from policy_engine.sweep.executor import ExecutorError, open_executor  # Dask only for the commands that run

    try:
        return open_executor(scheduler, workers)
    except ExecutorError as error:
        fail_input([str(error)])


def topology_or_exit(path: str | Path | None) -> Topology:
    """Load ``path`` (or the embedded example when ``None``), exiting 2 on bad input."""
    # Imported here so that ``--help`` and the command table never load pydantic and YAML.
    from policy_engine.inputs.examples import example_topology
    from policy_engine.inputs.loading import LoadError, load_topology

    if path is None:
        return example_topology()
    try:
        return load_topology(path)
    except LoadError as error:
        fail_input(error.problems)


class SafePath(click.Path):
    """``click.Path`` that refuses a name with a NUL byte as a usage error (``os.stat`` would raise)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str | bytes) and "\0" in os.fsdecode(value):
            self.fail(f"{value!r}: a file name cannot contain a NUL byte", param, ctx)
        return super().convert(value, param, ctx)


class DurationRange(SecondsParamType):
    """Seconds, or a duration as ``history --since`` and targets write it: ``30d``, ``12h``, ``90m``, ``3600s``;
    ``0`` and plain numbers are seconds. Bounded like ``FiniteFloatRange``."""

    name = "duration"

    def __init__(self, min: float = 0.0, max: float = math.inf, min_open: bool = False):
        self.min, self.max, self.min_open = min, max, min_open

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, (int, float)):
            seconds = float(value)
        else:
            from policy_engine.foundation.units import parse_duration

            text = str(value).strip()
            try:
                seconds = float(text)
            except ValueError:
                try:
                    seconds = parse_duration(text)
                except ValueError:
                    self.fail(f"{value!r} is not a duration (30d, 12h, 90m, 3600s or seconds)", param, ctx)
        from policy_engine.foundation.units import duration_text

        if not math.isfinite(seconds):
            self.fail(f"{value!r} is not a finite duration", param, ctx)
        if seconds < self.min:
            self.fail(f"{value!r} is below {duration_text(self.min)}", param, ctx)
        if self.min_open and seconds == self.min:
            self.fail(f"{value!r}: must be more than {duration_text(self.min)}", param, ctx)
        if seconds > self.max:
            self.fail(f"{value!r} is more than {duration_text(self.max)}", param, ctx)
        return seconds


class LocalWorkers(click.IntRange):
    """``--workers N``: the processes of a local cluster, 1 to the CPUs this machine has (a larger cluster is
    ``--scheduler ADDRESS``); checked when the option is read, whether or not the run then needs a cluster."""

    name = "integer"

    def __init__(self) -> None:
        super().__init__(min=1)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        from policy_engine.sweep.executor import workers_problem

        if (problem := workers_problem(number)) is not None:
            self.fail(problem, param, ctx)
        return number


class FiniteFloatRange(click.FloatRange):
    """``click.FloatRange`` that refuses ``nan`` and ``inf`` (which pass any range check or none).

    Without bounds it shows none in ``--help`` (click would print ``[x<=None]``).
    """

    def _describe_range(self) -> str:
        return "" if self.min is None and self.max is None else super()._describe_range()

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


def start_instant(start: str | None, problems: list[str]) -> datetime | None:
    """``--start`` of ``fit`` and ``generate``: the instant generated second 0 stands for, or a problem line."""
    from policy_engine.foundation.model import plan_time

    if start is None:
        return None
    try:
        parsed = plan_time(start)
    except ValueError:
        parsed = None
    if isinstance(parsed, datetime):
        return parsed
    problems.append(f"--start {start!r}: must be an ISO 8601 time with a time zone (2026-12-07T00:00:00Z)")
    return None
