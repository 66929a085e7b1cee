"""The fuzz campaign's endpoint share in the normal suite: hostile requests over HTTP to a real ``batch-quota serve``
(the AWS APIs from their botocore shapes, the control API, the request guard, oversized heads). No 5xx, no answer
that is not JSON, no request the guard lets through, no traceback in the server's log.

``benchmarks/fuzz_bench.py --requests N`` runs the same harness over thousands of requests and prints its figures.
"""

from __future__ import annotations

import random

import pytest

from tests.policy_engine import endpoint_fuzz


@pytest.fixture(scope="module")
def server():
    with endpoint_fuzz.Server() as running:
        yield running


@pytest.mark.parametrize("seed", range(4))
def test_hostile_requests_over_http_get_4xx_or_2xx_json_and_the_guard_refuses_what_it_must(server, seed):
    rng = random.Random(seed)
    answers = [endpoint_fuzz.send(server, request) for request in endpoint_fuzz.requests(rng, 120)]
    failures = [(a.request.kind, a.request.path[:80], a.request.body[:200], a.problem) for a in answers if a.problem]
    assert not failures, failures
    assert not endpoint_fuzz.server_problems(server.log())
    statuses = {a.status for a in answers}
    assert 200 in statuses and 403 in statuses and 400 in statuses  # the campaign reaches handlers and the guard


def test_oversized_heads_are_431_and_the_server_stays_up(server):
    for request in endpoint_fuzz.oversized_heads():
        answer = endpoint_fuzz.send_head(server, request)
        assert answer.problem is None, (request.kind, answer.problem)
    clock = endpoint_fuzz.Request("clock", "GET", "/_batch-quota/clock", headers={"Content-Type": "application/json"})
    assert endpoint_fuzz.send(server, clock).status == 200


def test_the_harness_catches_what_it_must():
    """A 500, an answer that is not JSON and a guard that lets a request through are failures, so a clean
    campaign means something."""
    plain = endpoint_fuzz.Request("x", "GET", "/")
    assert endpoint_fuzz.judge(plain, 500, b'{"__type": "ServerException"}', 0.1).startswith("HTTP 500")
    assert endpoint_fuzz.judge(plain, 200, b"<html>", 0.1).startswith("not JSON")
    assert endpoint_fuzz.judge(plain, 400, b"{}", 99).startswith("over ")
    refused = endpoint_fuzz.Request("x", "GET", "/", refused=True)
    assert endpoint_fuzz.judge(refused, 200, b"{}", 0.1) == "the guard let it through: HTTP 200"
    assert endpoint_fuzz.judge(refused, 403, b"{}", 0.1) is None
    assert endpoint_fuzz.server_problems("batch-quota serve: internal error on POST /v1/x\nTraceback (most ...")
