"""The connectors' own input files (a CloudFormation template, a history CSV) read through the safe layer."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from policy_engine.adapters.aws.history import share_medians
from policy_engine.cli.app import main
from policy_engine.inputs.input_files import InputFileError
from policy_engine.inputs.loading import LoadError
from policy_engine.inputs.template import read_template_file

LAUGHS = "\n".join(['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
                   + [f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]" for p, c in zip("abcdefgh", "bcdefghi", strict=True)])


@pytest.mark.parametrize("data, expected", [
    (b"Resources: {Q: {Type: caf\xe9}}\n", "not UTF-8 text (byte 0xE9 at line 1)"),
    (("[" * 5000 + "]" * 5000).encode(), "nest"),
    (("Resources: {}\n" + LAUGHS).encode(), "aliases expand the document"),
])
def test_a_hostile_template_is_one_line(tmp_path, data, expected):
    path = tmp_path / "template.yaml"
    path.write_bytes(data)
    with pytest.raises(LoadError) as error:
        read_template_file(path)
    assert len(error.value.problems) == 1 and expected in error.value.problems[0]
    result = CliRunner().invoke(main, ["import", "--from-template", str(path)])
    assert result.exit_code == 2 and expected in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_a_fifo_template_is_refused_at_once(tmp_path):
    fifo = tmp_path / "template.json"
    os.mkfifo(fifo)
    with pytest.raises(LoadError, match="FIFO"):
        read_template_file(fifo)


@pytest.mark.parametrize("text, expected", [
    ("share,duration\nq/a,nan\n", "not a finite number"),
    ("share,duration\nq/a," + "9" * 200_000 + "\n", "field larger than field limit"),
])
def test_a_hostile_history_csv_is_a_value_error(tmp_path, text, expected):
    path = tmp_path / "history.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=expected):
        share_medians(str(path))
    os.mkfifo(tmp_path / "fifo.csv")
    with pytest.raises(InputFileError, match="FIFO"):
        share_medians(str(tmp_path / "fifo.csv"))


def test_import_never_writes_over_its_template(tmp_path):
    import json

    from policy_engine.inputs.examples import example_topology
    from tests.policy_engine.adapters.aws.fake_account import topology_template

    path = tmp_path / "stack.template.json"
    text = json.dumps(topology_template(example_topology()))
    path.write_text(text)
    result = CliRunner().invoke(main, ["import", "--from-template", str(path), "-o", str(path)])
    assert result.exit_code == 2 and "is also an input" in result.stderr and path.read_text() == text


def test_snapshot_never_writes_over_its_history(tmp_path):
    path = tmp_path / "history.csv"
    path.write_text("share,duration\nq/a,60\n")
    result = CliRunner().invoke(main, ["snapshot", "--queue", "q", "--history", str(path), "-o", str(path)])
    assert result.exit_code == 2 and "is also an input" in result.stderr
    assert path.read_text() == "share,duration\nq/a,60\n"
