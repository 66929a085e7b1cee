"""ListServiceJobs' filter rules, read from the botocore model's own documentation and checked one by one.

The ``batch`` model documents, for ``filters`` and ``jobStatus``: only one filter at a time; with a filter,
``jobStatus`` is ignored (jobs of every status), except ``SHARE_IDENTIFIER`` and ``QUOTA_SHARE_NAME``, which
combine with it; without a status (and no filter) only RUNNING jobs; results newest first. The rules below are
extracted from that text (so a model that words them otherwise fails here first), then asserted over HTTP.
"""

from __future__ import annotations

import re

import botocore.session
import pytest

from tests.policy_engine.adapters.endpoint.conftest import client, create_stack, error_of, submit

_MODEL = botocore.session.get_session().get_service_model("batch").operation_model("ListServiceJobs").input_shape
FILTERS_DOC = _MODEL.members["filters"].documentation
STATUS_DOC = _MODEL.members["jobStatus"].documentation


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=\.)\s+", re.sub(r"<[^>]+>", "", text)) if s.strip()]


def _codes(text: str) -> set[str]:
    return set(re.findall(r"<code>([A-Z_]+)</code>", text))


#: Every filter name the model defines (its ``<dt>`` list).
DOCUMENTED = set(re.findall(r"<dt>([A-Z_]+)</dt>", FILTERS_DOC))
#: The filters the model says combine with ``jobStatus`` (its "can be used with/together" sentences).
COMBINED = set().union(*(_codes(part) for part in re.split(r"(?<=\.)\s", FILTERS_DOC + " " + STATUS_DOC)
                         if "can be used" in part and "jobStatus" in part)) & DOCUMENTED
#: The filters with which ``jobStatus`` is ignored: every other one.
IGNORING = DOCUMENTED - COMBINED


def test_the_rules_are_read_from_the_model():
    assert {"JOB_NAME", "BEFORE_CREATED_AT", "AFTER_CREATED_AT", "SHARE_IDENTIFIER", "QUOTA_SHARE_NAME"} == DOCUMENTED
    assert {"SHARE_IDENTIFIER", "QUOTA_SHARE_NAME"} == COMBINED
    assert any("jobStatus is ignored" in s for s in _sentences(FILTERS_DOC))
    assert any("jobStatus parameter is ignored and jobs with any status are returned" in s
               for s in _sentences(STATUS_DOC))
    assert any("Only one filter can be used at a time" in s for s in _sentences(FILTERS_DOC))
    assert any("only RUNNING jobs are returned" in s for s in _sentences(STATUS_DOC))
    assert any("most recent jobs being first" in s for s in _sentences(FILTERS_DOC))


@pytest.fixture
def mixed(endpoint):
    """Share A (limit 2, borrowing) and B: A's first two jobs run, the others wait; one job of A finished."""
    batch = client(endpoint)
    create_stack(batch, shares=(("A", "RESERVE", 2, None, "DISABLED"), ("B", "RESERVE", 2, None, "DISABLED")))
    done = submit(batch, "a-done", "A", tags={"batch-quota:duration": "10"})
    endpoint.advance(20)
    created = batch.describe_service_job(jobId=done)["createdAt"]
    jobs = {name: submit(batch, name, share) for name, share in
            (("a-run-1", "A"), ("a-run-2", "A"), ("a-wait-1", "A"), ("a-wait-2", "A"), ("b-run", "B"))}
    statuses = {name: batch.describe_service_job(jobId=job)["status"] for name, job in jobs.items()}
    assert statuses == {"a-run-1": "RUNNING", "a-run-2": "RUNNING", "a-wait-1": "RUNNABLE", "a-wait-2": "RUNNABLE",
                        "b-run": "RUNNING"}
    assert batch.describe_service_job(jobId=done)["status"] == "SUCCEEDED"
    return batch, {"a-done": done, **jobs}, created


def _listed(batch, **kwargs) -> list[tuple[str, str]]:
    pages = batch.get_paginator("list_service_jobs").paginate(jobQueue="training", **kwargs)
    return [(job["jobName"], job["status"]) for page in pages for job in page["jobSummaryList"]]


#: One filter per documented name, each matching jobs of share A of several statuses.
def _filter(name: str, created: int) -> dict:
    value = {"JOB_NAME": "A-*", "BEFORE_CREATED_AT": str(created + 60_000), "AFTER_CREATED_AT": str(created - 1),
             "SHARE_IDENTIFIER": "A", "QUOTA_SHARE_NAME": "A"}[name]
    return {"name": name, "values": [value]}


@pytest.mark.parametrize("name", sorted(COMBINED))
def test_a_share_filter_combines_with_job_status(mixed, name):
    batch, _, created = mixed
    waiting = _listed(batch, jobStatus="RUNNABLE", filters=[_filter(name, created)])
    everything = _listed(batch, filters=[_filter(name, created)])
    assert all(status == "RUNNABLE" for _, status in waiting)  # the status applies
    assert {job for job in waiting} <= set(everything)
    if name == "QUOTA_SHARE_NAME":
        assert waiting == [("a-wait-2", "RUNNABLE"), ("a-wait-1", "RUNNABLE")]  # newest first
        assert _listed(batch, jobStatus="SUCCEEDED", filters=[_filter(name, created)]) == [("a-done", "SUCCEEDED")]
    else:  # SHARE_IDENTIFIER: fair-share identifiers; a quota-managed queue's jobs have none
        assert everything == []


@pytest.mark.parametrize("name", sorted(IGNORING))
def test_any_other_filter_makes_job_status_ignored(mixed, name):
    batch, _, created = mixed
    without = _listed(batch, filters=[_filter(name, created)])
    for status in ("RUNNABLE", "SUCCEEDED", "FAILED"):
        assert _listed(batch, jobStatus=status, filters=[_filter(name, created)]) == without
    statuses = {status for _, status in without}
    assert {"RUNNING", "RUNNABLE"} <= statuses  # jobs of any status are returned


def test_without_status_or_filter_only_running_jobs_newest_first(mixed):
    batch, _, _ = mixed
    assert _listed(batch) == [("b-run", "RUNNING"), ("a-run-2", "RUNNING"), ("a-run-1", "RUNNING")]


def test_only_one_filter_at_a_time(mixed):
    batch, _, created = mixed
    code, status, message = error_of(batch.list_service_jobs, jobQueue="training",
                                     filters=[_filter("QUOTA_SHARE_NAME", created), _filter("JOB_NAME", created)])
    assert (code, status) == ("ClientException", 400) and "one filter" in message
