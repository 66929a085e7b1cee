"""Schema errors in the author's words: a validator's message reads as written, without pydantic's prefix."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError, field_validator

from policy_engine.inputs.schema_errors import describe
from tests.cli import invoke


class _Checked(BaseModel):
    raised: int = 0
    asserted: int = 0
    bare: int = 0

    @field_validator("raised")
    @classmethod
    def _raised(cls, value: int) -> int:
        if value < 0:
            raise ValueError("a count is 0 or more")
        return value

    @field_validator("asserted")
    @classmethod
    def _asserted(cls, value: int) -> int:
        if value < 0:  # an ``assert`` here would be reworded by pytest's assertion rewriting
            raise AssertionError("a count is 0 or more")
        return value

    @field_validator("bare")
    @classmethod
    def _bare(cls, value: int) -> int:
        if value < 0:
            raise AssertionError
        return value


def _error(**fields: object) -> dict:
    with pytest.raises(ValidationError) as caught:
        _Checked.model_validate(fields)
    (error,) = caught.value.errors()
    return dict(error)


@pytest.mark.parametrize(("fields", "expected"), [
    ({"raised": -1}, "a count is 0 or more, got -1"),          # pydantic: "Value error, a count is 0 or more"
    ({"asserted": -1}, "a count is 0 or more, got -1"),        # pydantic: "Assertion failed, a count is 0 or more"
    ({"bare": -1}, "the value fails a check of the schema, got -1"),  # pydantic: "Assertion failed, "
    ({"raised": "ten"}, "input should be a valid integer, unable to parse string as an integer, got 'ten'"),
])
def test_a_validators_message_reads_as_written_and_pydantics_own_as_a_sentence(fields, expected):
    assert describe(_error(**fields), ()) == expected


def test_a_validators_message_keeps_its_capitals():
    """Only pydantic's own sentences are lower-cased at the start; a validator's message is the author's."""
    class Plan(BaseModel):
        start: int

        @field_validator("start")
        @classmethod
        def _start(cls, value: int) -> int:
            raise ValueError("ISO 8601 times need a time zone")

    with pytest.raises(ValidationError) as caught:
        Plan(start=1)
    assert describe(dict(caught.value.errors()[0]), ()) == "ISO 8601 times need a time zone, got 1"


def test_a_bad_target_in_a_file_is_one_sentence_without_pydantics_prefix(write_file):
    path = write_file("t.yaml", """\
service_environments: [{name: env, capacity: {ml.g5.xlarge: 2}}]
job_queues:
  - {name: q, service_environment: env, shares: [{name: A, capacity: {ml.g5.xlarge: 1}, strategy: LEND}]}
targets:
  - {share: A, max_preemptions_per_job: -1}
""")
    out = invoke("check", str(path))
    assert out.exit_code == 2
    assert out.stderr.splitlines() == [
        f"error: {path}:5: targets[0].max_preemptions_per_job: a number of preemptions is 0 or more, got -1"]
