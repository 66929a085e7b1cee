"""``batch-quota tune SCENARIO --vary ... --minimize EXPR --budget N``: recommend a topology, with evidence.

Only knobs AWS has are searched (share limits, strategies, borrow limits, in-share preemption, states,
environment capacity, transfers between two shares); simulator assumptions (``settings.*``,
``workload.*``) are refused as ``--vary`` and taken by ``--assume`` instead. Exit 0 with a
recommendation or the answer to keep the current topology, 1 when no candidate meets every
constraint (the nearest is named), 2 on bad input.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
import yaml

from policy_engine.analysis.checks import check_topology
from policy_engine.analysis.promise_changes import PromiseChange
from policy_engine.cli.commands.axis_options import axis_options
from policy_engine.cli.commands.cost_options import cost_options, note_pricing, pricing_or_exit
from policy_engine.cli.commands.sample_options import samples_option
from policy_engine.cli.commands.shared import (
    EXIT_FINDINGS,
    EXIT_OK,
    FiniteFloatRange,
    LocalWorkers,
    executor_or_exit,
    fail_input,
    python_topologies,
    scenario_or_exit,
)
from policy_engine.cli.commands.sweep import DEFAULT_OBJECTIVE, EXIT_INTERRUPTED, axes_or_exit
from policy_engine.foundation.bounds import MAX_GRID
from policy_engine.foundation.model import Topology
from policy_engine.foundation.output_files import atomic_write
from policy_engine.inputs.input_files import refuse_overwriting_inputs
from policy_engine.reports.registry import TUNE_FORMATS
from policy_engine.simulation.scenarios.samples import sample_problems
from policy_engine.simulation.scenarios.workload import Scenario
from policy_engine.sweep.candidate import topology_for
from policy_engine.sweep.cost_metrics import RunCosts
from policy_engine.sweep.expressions import (
    ExpressionError,
    parse_constraint,
    parse_expression,
)
from policy_engine.sweep.grammar import Axis, VaryError, parse_vary
from policy_engine.sweep.guarantee_policy import GuaranteePolicy
from policy_engine.sweep.progress import progress_bar
from policy_engine.sweep.subjects import TuneOutput
from policy_engine.sweep.target_constraints import TARGETS_MISSED, TargetUse, target_constraints
from policy_engine.sweep.topology_file import recommended_text, topology_data
from policy_engine.sweep.tune import DEFAULT_MIN_GAIN, Objective, tune


def _remember_order(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    """Objectives keep the order of the command line (click processes options in the order given)."""
    ctx.meta.setdefault("objective_order", []).extend((param.name, text) for text in value)
    return value


def topology_yaml(topology: Topology, header: str) -> str:
    """The topology in the file format ``check`` and ``cdk synth`` read (defaults left out), after ``header``."""
    comments = "".join(f"# {line}\n" for line in header.splitlines())
    return comments + yaml.safe_dump(topology_data(topology), sort_keys=False)


@python_topologies("named by the scenario's topology:")
@click.command("tune")
@click.argument("scenario", type=click.Path(dir_okay=False))
@axis_options("The search space, as for sweep (repeatable).")
@click.option("--minimize", multiple=True, metavar="EXPR", callback=_remember_order,
              help="An objective to minimize, e.g. 'max(wait_p95)' (repeatable: several make a Pareto front).")
@click.option("--maximize", multiple=True, metavar="EXPR", callback=_remember_order,
              help="An objective to maximize, e.g. cluster_utilisation.")
@click.option("--constraint", "constraints", multiple=True, metavar="EXPR",
              help="'guarantees' or EXPR <= NUMBER, e.g. 'share(training/prod).wait_p95 <= 600' (repeatable).")
@click.option("--budget", type=click.IntRange(1, MAX_GRID), required=True, metavar="N",
              help="Candidates to simulate.")
@click.option("-o", "--output-topology", "out_file", type=click.Path(dir_okay=False),
              help="Write the recommended topology (YAML; it passes check).")
@click.option("--pick", type=click.IntRange(min=1), default=1, show_default=True, metavar="N",
              help="With several objectives: recommend the N-th point of the Pareto front (by the first objective).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the sampler.")
@click.option("--batch-size", type=click.IntRange(1, MAX_GRID), default=8, show_default=True,
              help="Candidates asked per round (fixed, so results do not depend on the worker count); at most "
                   "--budget.")
@click.option("--assume", "assume", multiple=True, metavar="PATH=VALUES",
              help="A simulator assumption to test the answer under (settings.* or workload.*, the --vary grammar; "
                   "repeatable): every candidate is evaluated under each, shown in an assumption-sensitivity "
                   "table, never written into the recommended topology.")
@click.option("--min-gain", "min_gain", type=FiniteFloatRange(min=0, max=1), default=DEFAULT_MIN_GAIN,
              show_default=True, metavar="FRACTION",
              help="How much better than the current topology the recommendation must be on the first objective "
                   "(relative; when the current value is 0, an absolute gain of 1). Otherwise: keep the current.")
@click.option("--targets", type=click.Choice([use.value for use in TargetUse]), default=TargetUse.CONSTRAINTS.value,
              show_default=True,
              help="The topology's targets: constraints (a candidate that misses one is infeasible), objectives "
                   "(the criteria missed, minimized beside the other objectives) or ignore (not searched on).")
@samples_option("every candidate is evaluated on the same K samples, seeded by --seed; rank by the mean; recommend "
                "only a candidate that beats the current topology on more than K/2 of them. --workload-samples is "
                "the older name of the same option.", "--workload-samples")
@click.option("--scheduler", metavar="ADDRESS", help="Dask scheduler (default $DASK_SCHEDULER_ADDRESS, else local).")
@click.option("--workers", type=LocalWorkers(), metavar="N",
              help="Worker processes of the local cluster; 1 runs in-process.")
@TUNE_FORMATS.option("output")
@click.option("--report", "report_dir", type=click.Path(file_okay=False),
              help="Write DIR/index.html with the evidence, the Pareto front and its chart.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@cost_options
@click.pass_context
def command(ctx: click.Context, scenario: str, vary: tuple[str, ...], minimize: tuple[str, ...],
            maximize: tuple[str, ...], constraints: tuple[str, ...], budget: int, out_file: str | None, pick: int,
            seed: int, batch_size: int, assume: tuple[str, ...], min_gain: float, guarantee_policy: str,
            samples: int, scheduler: str | None, workers: int | None, output: str,
            report_dir: str | None, quiet: bool, prices_path: str | None, chargeback: str | None,
            period_text: str | None, targets: str, allow_python: bool = False) -> None:
    """Search the --vary space of SCENARIO for the best topology under objectives and constraints."""
    loaded = scenario_or_exit(scenario, allow_python)
    axes = axes_or_exit(vary, loaded)
    problems: list[str] = [
        f"--vary {axis.path}: {axis.path.split('.')[0]}.* is a simulator assumption, not a knob AWS has; tune "
        f"recommends topologies only: test it with --assume {axis.path}=..."
        for axis in axes if axis.assumption]
    assumptions = _assumptions_or_problems(assume, loaded, problems)
    workload_samples = samples if samples > 1 else 0
    if workload_samples:
        problems += sample_problems(loaded)
    order = ctx.meta.get("objective_order") or [("minimize", DEFAULT_OBJECTIVE)]
    pricing = pricing_or_exit(prices_path, chargeback, loaded.topology, [text for _, text in order] + list(constraints),
                              axes, period_text, loaded.settings.start)
    costs = RunCosts(loaded.topology, pricing)
    objectives, parsed_constraints = [], []
    for name, text in order:
        try:
            objectives.append(Objective(parse_expression(text, loaded.topology, pricing), name == "maximize"))
        except ExpressionError as error:
            problems.append(f"--{name}: {error}")
    for text in constraints:
        try:
            parsed_constraints.append(parse_constraint(text, loaded.topology, pricing))
        except ExpressionError as error:
            problems.append(f"--constraint: {error}")
    note_pricing(pricing, any(o.expression.reads_bill for o in objectives) or any(c.reads_bill for c in
                                                                                   parsed_constraints))
    use = TargetUse(targets)
    if use is TargetUse.CONSTRAINTS:
        parsed_constraints += target_constraints(loaded.topology)  # a candidate that misses a target is infeasible
    elif use is TargetUse.OBJECTIVES and loaded.topology.targets:
        objectives.append(Objective(TARGETS_MISSED, False))  # the criteria missed, minimized beside the others
    if batch_size > budget:  # a round asks for its whole batch at once: never more than the budget
        if ctx.get_parameter_source("batch_size") is click.core.ParameterSource.DEFAULT:
            batch_size = budget  # the default is a round of 8: a smaller budget is one round
        else:
            problems.append(f"--batch-size {batch_size}: larger than --budget {budget}; a round is at most the budget")
    if pick > 1 and len(objectives) < 2:
        problems.append("--pick chooses a point of a Pareto front: it needs two or more objectives")
    problems += refuse_overwriting_inputs({"-o": out_file}, [scenario, *loaded.inputs])
    if out_file and Path(out_file).suffix.lower() == ".py":
        problems.append(f"-o {out_file}: tune writes a topology as data, not as a Python module; write YAML beside "
                        f"it: -o {Path(out_file).with_suffix('.yaml')}")
    if out_file and not Path(out_file).absolute().parent.is_dir():
        problems.append(f"-o {out_file}: the directory {Path(out_file).absolute().parent} does not exist")
    if problems:
        fail_input(problems)
    executor = executor_or_exit(scheduler, workers)
    try:
        with executor:
            if not quiet:  # before the bar: a line written under a live bar leaves a piece of the bar behind
                click.echo(f"tuning {len(axes)} field(s), budget {budget} run(s), on {executor.description}",
                           err=True)
            with progress_bar("tune", not quiet) as update:
                result = tune(loaded, axes, objectives, parsed_constraints, budget, executor, seed, batch_size, pick,
                              update, guarantees=GuaranteePolicy(guarantee_policy),
                              workload_samples=workload_samples, assumptions=assumptions, min_gain=min_gain,
                              period=pricing.period)
    except KeyboardInterrupt:
        click.echo("interrupted: nothing recommended (a smaller --budget ends sooner)", err=True)
        raise SystemExit(EXIT_INTERRUPTED) from None
    if len(objectives) > 1 and result.front and pick > len(result.front):
        fail_input([f"--pick {pick}: the Pareto front has {len(result.front)} point(s)"])
    chosen = result.chosen
    policy = GuaranteePolicy(guarantee_policy)
    recommended = topology_for(loaded.topology, axes, chosen.values, policy) if chosen else None
    promises = _promise_changes(loaded.topology, recommended) if recommended is not None else []
    if out_file and chosen is not None and recommended is not None:
        best_topology = recommended
        if not check_topology(best_topology).ok:  # never: an invalid candidate is not simulated, so not chosen
            fail_input([f"{out_file}: the recommended topology does not pass check; nothing written"])
        try:
            text = recommended_text(Path(scenario), loaded.topology, best_topology, Path(out_file))
            with atomic_write(out_file) as handle:
                handle.write(text)
        except OSError as error:
            fail_input([f"{out_file}: cannot write the topology: {error.strerror or error}"])
    tuned = TuneOutput(result, axes, objectives, parsed_constraints, out_file, promises, policy, min_gain, costs)
    if report_dir:
        _write_report(tuned, Path(report_dir), scenario)
    TUNE_FORMATS.renderer(output)(tuned, sys.stdout)
    raise SystemExit(EXIT_OK if result.best else EXIT_FINDINGS)


def _assumptions_or_problems(assume: tuple[str, ...], loaded: Scenario, problems: list[str]) -> list[Axis]:
    """``--assume`` in the ``--vary`` grammar, settings and workload paths only."""
    if not assume:
        return []
    try:
        axes = parse_vary(list(assume), loaded.topology)
    except VaryError as error:
        problems += [problem.replace("--vary", "--assume", 1) for problem in error.problems]
        return []
    problems += [f"--assume {axis.path}: an assumption is a settings.*, workload.* or profile.* path; {axis.path} is a "
                 f"topology knob: vary it with --vary" for axis in axes if not axis.assumption]
    return [axis for axis in axes if axis.assumption]



def _promise_changes(base: Topology, recommended: Topology) -> list[PromiseChange]:
    """The guarantee declarations the recommendation changes (``--guarantee-policy follow|drop``)."""
    from policy_engine.analysis.promise_changes import compare_promises

    return compare_promises(base, recommended, lambda node: node, {}, {})


def _write_report(output: TuneOutput, directory: Path, source: str) -> None:
    from policy_engine.reports.tune.page import write_page

    try:
        page = write_page(output, directory, source)
    except OSError as error:
        fail_input([f"{directory}: cannot write the report: {error.strerror or error}"])
        return
    click.echo(f"wrote {page}", err=True)
