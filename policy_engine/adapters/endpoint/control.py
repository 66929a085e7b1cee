"""The ``/_batch-quota/`` control API: the clock, reset, loading a topology, and exporting the run.

    GET  /_batch-quota/clock                      {"seconds", "epochMillis", "speed"}
    POST /_batch-quota/clock/advance?seconds=N    run the simulator N simulated seconds ahead
    POST /_batch-quota/reset                      start over: the startup topology, no jobs, clock 0
    POST /_batch-quota/topology                   start over with the topology in the body (YAML or JSON)
    GET  /_batch-quota/export                     {"scenario": ..., "events": [...]}: the run so far
    GET  /_batch-quota/findings                   {"findings": [...]}: what ``check`` finds in the resources now
    GET  /_batch-quota/events                     where ``--events``/``--events-url`` send events, and counts
    GET  /_batch-quota/stacks                     the deploy rehearsal: stacks, their resources, rules, log groups

The exported scenario is what ``batch-quota simulate`` reads (save it as YAML or JSON),
so ``simulate --report`` draws what happened; the events are the state changes in
``simulate --events`` form.
"""

from __future__ import annotations

import io
import math
from collections import Counter
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from policy_engine.adapters.endpoint.base.account import api_problems, problem_text
from policy_engine.adapters.endpoint.base.errors import client_error
from policy_engine.adapters.endpoint.guard import CONTROL_PREFIX
from policy_engine.adapters.endpoint.handlers.registry import Output
from policy_engine.adapters.endpoint.service import Service
from policy_engine.foundation.model import plan_time_text
from policy_engine.simulation.results.numbers import as_number

if TYPE_CHECKING:
    from policy_engine.foundation.model import Topology

PREFIX = CONTROL_PREFIX


def handle(service: Service, method: str, path: str, query: bytes, body: bytes) -> Output:
    route = path[len(PREFIX):].rstrip("/")
    if (method, route) == ("GET", "clock"):
        service.catch_up()
        return service.clock_state()
    if (method, route) == ("POST", "clock/advance"):
        values = parse_qs(query.decode("latin-1")).get("seconds")
        try:
            seconds = float(values[-1]) if values else math.nan
        except ValueError:
            seconds = math.nan
        if not (seconds >= 0 and math.isfinite(seconds)):
            raise client_error("clock/advance needs ?seconds=N with N a finite number >= 0")
        return service.control("advance", {"seconds": seconds})
    if (method, route) == ("POST", "reset"):
        return service.control("reset", {})
    if (method, route) == ("POST", "topology"):
        return service.control("topology", {"topology": _topology(body)})
    if (method, route) == ("GET", "findings"):
        return service.audit.to_json()
    if (method, route) == ("GET", "events"):
        service.catch_up()
        if service.events is None:
            return {"sinks": []}
        return service.events.state()
    if (method, route) == ("GET", "stacks"):
        return service.rehearsal.state()
    if (method, route) == ("GET", "export"):
        service.catch_up()
        return export(service)
    raise client_error(f"No control operation {method} {path} (see docs/endpoint.md)")


def _topology(body: bytes) -> Topology:
    """The body read as a topology file is read (size cap, UTF-8, YAML 1.2 or JSON, bounded nesting and
    aliases): every problem is one line of the ``ClientException``."""
    from policy_engine.inputs.loading import LoadError, load_topology_stream

    try:
        topology = load_topology_stream(io.BytesIO(body), "topology")
    except LoadError as error:
        raise client_error("; ".join(str(problem) for problem in error.problems)) from None
    problems = api_problems(topology)
    if problems:  # what AWS would reject is not served (as `batch-quota serve TOPOLOGY` exits 1)
        raise client_error("; ".join(map(problem_text, problems)))
    return topology


def export(service: Service) -> Output:
    """The run so far as a scenario (current topology, jobs as submitted, priority updates) plus its events."""
    records = service.job_records()
    counts = Counter(record.name for record in records)
    names = {record.id: record.name if counts[record.name] == 1 else f"{record.name}-{record.id[:8]}"
             for record in records}
    jobs = []
    for record in records:
        job: dict[str, Any] = {"name": names[record.id], "share": f"{record.queue}/{record.share}",
               "instance_type": record.instance_type, "instances": record.instances,
               "priority": record.initial_priority, "submit_at": as_number(record.created),
               "duration": as_number(record.duration)}
        if record.preemption_retries is not None:
            job["preemption_retries"] = record.preemption_retries
        if record.training_plan is not None:
            job["training_plan"] = record.training_plan
            if record.max_runtime is not None:
                job["max_runtime"] = record.max_runtime
        if record.retry:
            job["attempts"] = record.retry["attempts"]
        timeout = (record.timeout or {}).get("attemptDurationSeconds")
        if timeout is not None and timeout < record.duration:  # every attempt times out (see Scheduler.submit)
            job["failures"] = job.get("attempts", 1)
            job["fail_after"] = timeout
        jobs.append(job)
    scheduler = service.scheduler
    actions = [{"at": as_number(at), "update_priority": {"job": names[job_id], "priority": priority}}
               for at, job_id, priority in scheduler.updates]
    topology = service.account.topology()
    scenario: dict[str, Any] = {"topology": topology.model_dump(mode="json", exclude_defaults=True), "jobs": jobs}
    if actions:
        scenario["actions"] = actions
    if scheduler.preemption_seconds:
        scenario["settings"] = {"preemption_delay": scheduler.preemption_seconds}
    if topology.training_plans:  # ISO 8601 plan windows count from the account's start, as served
        scenario["start"] = plan_time_text(datetime.fromtimestamp(service.origin_ms / 1000, UTC))
    out: Output = {
        "scenario": scenario,
        "events": [{"time": as_number(t), "job": names[job_id], "from": before, "to": after, "reason": reason}
                   for t, job_id, before, after, reason in scheduler.state_changes()],
        "time": as_number(service.now),
    }
    if scheduler.terminations:
        # scenarios have no terminate action: these are listed, and the replay lets the jobs run on
        out["notReplayed"] = [{"at": as_number(at), "terminate": names[job_id], "reason": reason}
                              for at, job_id, reason in scheduler.terminations]
    return out
