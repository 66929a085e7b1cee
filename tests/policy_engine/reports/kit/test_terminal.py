"""Colour on a terminal only, and never with NO_COLOR, for every command that prints tables or sentences."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from policy_engine.cli.app import main
from tests.policy_engine.reports.walkthrough import WALKTHROUGH

COMMANDS = [["explain", "QS1"], ["simulate", str(WALKTHROUGH)]]
ESC = "\x1b["


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
def test_no_escapes_when_not_a_terminal(args, monkeypatch):
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    result = CliRunner().invoke(main, args)  # CliRunner's output is not a terminal
    assert result.exit_code == 0, result.output
    assert ESC not in result.output


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
def test_no_color_beats_a_terminal(args, monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich: behave as on a terminal
    monkeypatch.delenv("NO_COLOR", raising=False)
    styled = CliRunner().invoke(main, args).output
    assert ESC in styled  # the control: a terminal does get styles
    monkeypatch.setenv("NO_COLOR", "1")
    plain = CliRunner().invoke(main, args).output
    assert ESC not in plain and plain.split() == _strip(styled).split()


def _strip(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)
