"""Every command's --help reads as click lays out a docstring: paragraphs at two spaces, words one space apart."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from policy_engine.cli.app import main


def _commands() -> list[str]:
    return sorted(main.list_commands(None))  # type: ignore[arg-type]


@pytest.mark.parametrize("name", _commands())
def test_the_description_is_wrapped_by_click_not_left_indented(name: str) -> None:
    result = CliRunner().invoke(main, [name, "--help"], terminal_width=100)
    assert result.exit_code == 0, result.output
    description = result.output.split("\nOptions:")[0].splitlines()[1:]
    prose = [line for line in description if line.strip() and not line.lstrip().startswith(("batch-quota", "$", "-"))]
    # a word gap of 3+ spaces inside a sentence is a docstring paragraph click failed to dedent and rewrap
    assert [line for line in prose if re.search(r"[a-z,;:] {3,}[a-z]", line)] == [], description
