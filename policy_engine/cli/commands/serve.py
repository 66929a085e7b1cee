"""``batch-quota serve``: a local AWS Batch endpoint for quota shares, scheduled by the simulator."""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

import click

from policy_engine.cli.commands.shared import EXIT_FINDINGS, SafePath, fail_input, python_topologies, topology_or_exit
from policy_engine.foundation.units import duration_text

if TYPE_CHECKING:
    from collections.abc import Sequence

    from policy_engine.events.sinks import EventSink
    from policy_engine.foundation.bounds import Bound
    from policy_engine.foundation.model import Topology


#: A ``--allow-host`` name: DNS labels joined by dots (an IP address is checked apart).
_HOST_NAME = re.compile(r"(?=.{1,253}\.?$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
                        r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?", re.ASCII)
#: A bearer token a client can put in a header: visible ASCII, no spaces.
_TOKEN = re.compile(r"[\x21-\x7e]{1,4096}", re.ASCII)


def _finite(ctx: click.Context, param: click.Parameter, value: float) -> float:
    """click's FloatRange lets ``nan`` and ``inf`` through; a clock or a duration must be a finite number."""
    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"{value} is not a finite number")
    return value


@python_topologies()
@click.command("serve")
@click.argument("topology", required=False, type=click.Path(dir_okay=False))
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; anything but a loopback address lets every client that reaches it drive "
                   "the account (a warning is printed).")
@click.option("--allow-host", "allowed_hosts", multiple=True, metavar="NAME",
              help="Also answer requests whose Host header is NAME (repeatable); by default only loopback names and "
                   "the bound address are answered, so DNS rebinding cannot reach the endpoint.")
@click.option("--token", envvar="BATCH_QUOTA_SERVE_TOKEN", show_envvar=True, metavar="TOKEN",
              help="Require Authorization: Bearer TOKEN on the control API (/_batch-quota/...); otherwise 401.")
@click.option("--port", type=click.IntRange(0, 65535), default=4599, show_default=True,
              help="Port to listen on; 0 picks a free one (the URL is printed).")
@click.option("--speed", callback=_finite, type=click.FloatRange(min=0), default=60.0, show_default=True,
              help="Simulated seconds per real second; 0: the clock moves only on POST /_batch-quota/clock/advance.")
@click.option("--state", "state_file", type=click.Path(dir_okay=False),
              help="Keep resources, jobs and the clock in this SQLite file across restarts (default: in memory).")
@click.option("--checkpoint-every", type=click.IntRange(min=0), default=None, metavar="CALLS",
              help="With --state: checkpoint the state every CALLS logged calls, so a restart replays at most "
                   "that many  [default: 2000; 0: never, a restart replays every call]")
@click.option("--walkthrough", is_flag=True,
              help="Serve AWS's quota-management example (queue 'training', shares QS1-QS3 on 3 x ml.g5.xlarge).")
@click.option("--enforce-limits", is_flag=True,
              help="Emulate SubmitServiceJob's 5 requests/s account limit (TooManyRequestsException, HTTP 429).")
@click.option("--default-duration", callback=_finite, type=click.FloatRange(min=0, min_open=True), default=3600.0,
              show_default=True, metavar="SECONDS",
              help="Run time of a job without a batch-quota:duration tag or MaxRuntimeSeconds.")
@click.option("--transition-seconds", callback=_finite, type=click.FloatRange(min=0), default=0.0, show_default=True,
              metavar="SECONDS", help="Simulated seconds a created/updated/deleted resource stays "
                                      "CREATING/UPDATING/DELETING.")
@click.option("--preemption-seconds", callback=_finite, type=click.FloatRange(min=0), default=0.0, show_default=True,
              metavar="SECONDS", help="A preempted job shows RUNNING with reason PREEMPTION_IN_PROGRESS this long "
                                      "(its preemptor SCHEDULED), as AWS's (about 20 s); 0: RUNNABLE at once.")
@click.option("--region", default="us-east-1", show_default=True, help="Region in the ARNs.")
@click.option("--events", "events_file", type=SafePath(dir_okay=False, writable=True), metavar="FILE.jsonl",
              help="Write the EventBridge events AWS sends for service jobs (state changes, preemptions, blocked "
                   "queues), one JSON object a line; appended to when --state resumes a state.")
@click.option("--events-url", metavar="URL",
              help="POST each such event to URL (http:// or https://), from a background thread with a few retries.")
def command(topology: str | None, host: str, allowed_hosts: tuple[str, ...], token: str | None, port: int,
            speed: float, state_file: str | None,
            checkpoint_every: int | None, walkthrough: bool,
            enforce_limits: bool, default_duration: float, transition_seconds: float, preemption_seconds: float,
            region: str, events_file: str | None, events_url: str | None) -> None:
    """Serve AWS Batch's quota-share API (REST-JSON) on HOST:PORT; TOPOLOGY's resources exist from the start.

    Point boto3, the AWS CLI or the SageMaker SDK at it with AWS_ENDPOINT_URL_BATCH=http://HOST:PORT;
    any credentials work (an Authorization header is required, its SigV4 signature
    is not verified). Requests a web page could send (a foreign Origin or Host, a
    form post) are refused 403: see docs/endpoint.md. TOPOLOGY's training plans are
    served as SageMaker's ListTrainingPlans and DescribeTrainingPlan (AWS_ENDPOINT_URL_SAGEMAKER; every
    other SageMaker operation is refused). With AWS_ENDPOINT_URL=http://HOST:PORT the CDK CLI deploys,
    diffs and destroys apps against it (STS, SSM, S3, CloudFormation): see docs/rehearsal.md.
    """
    if walkthrough and topology:
        raise click.UsageError("give a TOPOLOGY or --walkthrough, not both")
    from policy_engine.foundation import bounds

    problems = _option_problems(region, allowed_hosts, token, [
        ("--speed", speed, bounds.SPEED), ("--default-duration", default_duration, bounds.SECONDS),
        ("--transition-seconds", transition_seconds, bounds.SECONDS),
        ("--preemption-seconds", preemption_seconds, bounds.SECONDS)])
    if problems:
        fail_input(problems)
    loaded = None
    if topology or walkthrough:
        loaded = topology_or_exit(topology)
        _exit_on_api_errors(loaded, topology or "the walkthrough example")
    from policy_engine.adapters.endpoint import server
    from policy_engine.adapters.endpoint.service import CHECKPOINT_EVERY, Options, Service
    from policy_engine.adapters.endpoint.store import StateFileError, Store

    _log_to_stderr()
    options = Options(speed=speed, default_duration=default_duration, enforce_limits=enforce_limits,
                      transition_seconds=transition_seconds, preemption_seconds=preemption_seconds, region=region,
                      checkpoint_every=CHECKPOINT_EVERY if checkpoint_every is None else checkpoint_every)
    problems = _event_problems(events_file, events_url, [state_file, topology])
    if problems:
        fail_input(problems)
    store = None
    if state_file:
        try:
            store = Store(state_file)
            resuming = store.read_meta() is not None
        except StateFileError as error:
            fail_input([str(error)])
    else:
        resuming = False
    sinks = _sinks(events_file, events_url, append=resuming)
    try:
        if resuming and loaded is not None:
            click.echo(f"note: {state_file} already holds a state, which is resumed; {topology or '--walkthrough'} "
                       "is not loaded (POST /_batch-quota/topology starts over with a topology)", err=True)
        service = Service(options, loaded, store, sinks)
    except Exception as error:  # a state file written by another version, or damaged
        fail_input([f"{state_file}: cannot restore the state: {error}"])
        return
    try:
        sock = server.bind(host, port)
    except OSError as error:
        fail_input([f"cannot listen on {host}:{port}: {error.strerror or error}"])
        return
    url = server.url_of(sock)
    guard = server.guard_for(sock, host, allowed_hosts, token)
    if not guard.loopback_bind:
        click.echo(f"warning: listening on {host}, not a loopback address: every client that can reach it can drive "
                   "the account (submit, terminate, reset, read every job and payload); SigV4 is not verified"
                   + ("" if token else ", and the control API has no --token"), err=True)
    where = f"state in {state_file}" if state_file else "state in memory"
    if service.restored is not None:
        where += f"; {service.restored}"
    click.echo(f"batch-quota serve: {url} (speed {speed:g}x, clock at {duration_text(service.now)}, {where})", err=True)
    click.echo(f"  export AWS_ENDPOINT_URL_BATCH={url}", err=True)
    if service.account.plans:  # only plan reads are served: other SageMaker calls would be refused
        click.echo(f"  export AWS_ENDPOINT_URL_SAGEMAKER={url}   # training plans only", err=True)
    click.echo(f"  export AWS_ENDPOINT_URL={url}   # every service: cdk deploy/diff/destroy rehearse on it", err=True)
    click.echo(url)
    import uvicorn

    try:
        uvicorn.Server(server.config(service, guard)).run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn re-raises Ctrl-C after its graceful shutdown: a normal stop
        pass
    finally:
        if store is not None:
            store.close()
        if service.events is not None:
            service.events.close()
    click.echo(f"batch-quota serve: stopped at simulated {duration_text(service.now)}", err=True)


def _log_to_stderr() -> None:
    """The endpoint's log (a change's new findings, internal errors) as lines on stderr: ``batch-quota serve: ...``."""
    import logging

    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("batch-quota serve: %(message)s"))
    log = logging.getLogger("batch_quota.serve")
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False


def _option_problems(region: str, allowed_hosts: Sequence[str], token: str | None,
                     numbers: Sequence[tuple[str, float, Bound]]) -> list[str]:
    """One line per option the endpoint cannot serve with: a Region that is not AWS's, a ``--allow-host`` that is
    not a host name or address, a token a header cannot carry, a number past its bound (``bounds``)."""
    import ipaddress

    from policy_engine.foundation.regions import region_problem

    problems = []
    found = region_problem(region)
    if found:
        problems.append(f"--region {found}")
    for name in allowed_hosts:
        try:
            ipaddress.ip_address(name.strip("[]"))
        except ValueError:
            if not _HOST_NAME.fullmatch(name):
                problems.append(f"--allow-host {name!r}: expected a host name (letters, digits, hyphens and dots) "
                                "or an IP address, without a port")
    if token is not None and not _TOKEN.fullmatch(token):
        problems.append("--token (or BATCH_QUOTA_SERVE_TOKEN): expected 1-4096 visible ASCII characters without "
                        "spaces (what an Authorization header carries)")
    for option, value, bound in numbers:
        found = bound.problem(value)
        if found:
            problems.append(f"{option}: {found}")
    return problems


def _event_problems(events_file: str | None, events_url: str | None, inputs: Sequence[str | None]) -> list[str]:
    from urllib.parse import urlsplit

    from policy_engine.inputs.input_files import refuse_overwriting_inputs

    problems = refuse_overwriting_inputs({"--events": events_file}, list(inputs))
    if events_url is not None:
        try:
            parts = urlsplit(events_url)
            parts.port  # noqa: B018 (reading it checks the port: 'http://h:x' raises ValueError)
        except ValueError as error:  # 'http://[::1': an unclosed IPv6 address
            problems.append(f"--events-url {events_url}: not a URL ({error})")
        else:
            if parts.scheme not in ("http", "https") or not parts.netloc:
                problems.append(f"--events-url {events_url}: expected an http:// or https:// URL with a host")
    return problems


def _sinks(events_file: str | None, events_url: str | None, append: bool) -> list[EventSink]:
    from policy_engine.events.sinks import FileSink, HttpSink

    sinks: list[EventSink] = []
    if events_file is not None:
        try:
            sinks.append(FileSink(events_file, append=append))
        except OSError as error:
            fail_input([f"--events {events_file}: cannot write: {error.strerror or error}"])
    if events_url is not None:
        sinks.append(HttpSink(events_url))
    return sinks


def _exit_on_api_errors(topology: Topology, source: str) -> None:
    """AWS would reject what breaks its own rules (names, limits): such a topology cannot be served."""
    from policy_engine.adapters.endpoint.base.account import api_problems, problem_text

    problems = api_problems(topology)
    if problems:
        for finding in problems:
            click.echo(f"error: {source}: {problem_text(finding)}", err=True)
        raise SystemExit(EXIT_FINDINGS)



