"""Every text report fits a real terminal (tmux, 100 columns) on the wide case (nine teams, three instance
types, a training plan), headers whole; in a pipe the tables keep their full width (issue 35 §6)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests import tmux

ROOT = Path(__file__).resolve().parents[3]
WIDE = ROOT / "tests" / "data" / "wide"
CLI = str(Path(sys.executable).with_name("batch-quota"))
WIDTH = 100
VARY = ["--vary", "training/vision.capacity.ml.p4d.24xlarge=2,6", "--workers", "1"]


def _commands(folder: Path) -> dict[str, tuple[list[str], int, tuple[str, ...]]]:
    """name -> (arguments, exit code, header words that must show whole)."""
    week, a, b = str(WIDE / "week.yaml"), str(WIDE / "a.yaml"), str(WIDE / "b.yaml")
    return {
        "simulate": (["simulate", week, "--prices", str(WIDE / "prices.yaml")], 0,
                     ("borrowed", "preemptions", "utilisation", "inst-h", "attempts", "instance-hour")),
        "compare": (["compare", week, "--topology", a, "--topology", b, "--workers", "1"], 0,
                    ("preemptions", "utilisation", "instance-hours", "attempts")),
        "diff": (["diff", a, b, "--scenario", week, "--at", "0"], 1, ("preemptions", "utilisation")),
        "sweep": (["sweep", week, *VARY, "--out", str(folder / "sweep")], 0, ("preemptions",)),
        # exit 1: a target of the wide case no candidate meets
        "tune": (["tune", week, *VARY, "--minimize", "max(wait_p95)", "--budget", "2"], 1, ()),
        "explain": (["explain", "training/vision", "--scenario", week], 0, ()),
        "check": (["check", a], 0, ("preempted", "guaranteed")),
    }


def _split_mid_word(screen: str, word: str) -> bool:
    """Whether ``word`` shows only cut in two (``preem`` then ``ptions`` on the next line)."""
    tokens = set(re.split(r"[\s│┃|]+", screen))
    return word not in tokens and any(word.startswith(t) and len(t) >= 3 for t in tokens if t != word)


@tmux.needs_tmux
@pytest.mark.parametrize("command", list(_commands(Path())))
def test_every_text_report_fits_a_100_column_terminal_with_whole_headers(command, tmp_path):
    args, code, words = _commands(tmp_path)[command]
    status, screen = tmux.run([CLI, *args], WIDTH, env={"NO_COLOR": "1"}, cwd=tmp_path)
    assert status == code, screen
    too_wide = [line for line in screen.splitlines() if len(line.rstrip()) > WIDTH]
    assert not too_wide, "\n".join(too_wide)
    for word in words:
        assert word in screen and not _split_mid_word(screen, word), (word, screen)


@tmux.needs_tmux
def test_the_simulate_share_table_on_a_narrow_terminal_keeps_every_header_word_whole(tmp_path):
    status, screen = tmux.run([CLI, "simulate", str(WIDE / "week.yaml")], 80, env={"NO_COLOR": "1"}, cwd=tmp_path)
    assert status == 0
    shares = screen[screen.index("Shares"):screen.index("Instance types")]
    tokens = set(re.split(r"[\s│┃]+", shares))
    for word in ("share", "type", "strategy", "limit", "(inst)", "own", "util", "mean", "borrowed", "lent", "wait",
                 "p50", "p95", "max", "preemptions", "inst-h", "lost"):
        assert word in tokens, (word, shares)
    assert max(len(line.rstrip()) for line in screen.splitlines()) <= 80


def test_in_a_pipe_compare_keeps_each_table_at_full_width():
    week = str(WIDE / "week.yaml")
    out = subprocess.run([CLI, "compare", week, "--topology", str(WIDE / "a.yaml"), "--topology",
                          str(WIDE / "b.yaml"), "--workers", "1"], capture_output=True, text=True, check=True).stdout
    row = next(line for line in out.splitlines() if "training/vision" in line and "ml.p4d.24xlarge" in line)
    assert re.search(r"4h 13m → \d+h \d+m \(\+1h \d+m\)", row)  # the whole row on one line, every cell whole
    assert "cost (instance-hours, its bill)" in out


@tmux.needs_tmux
@pytest.mark.parametrize("columns", ["0", "5", "abc", "-3"])
@pytest.mark.parametrize("command", ["simulate", "explain", "compare"])
def test_a_nonsense_columns_is_laid_out_at_the_minimum_never_a_traceback(command, columns, tmp_path):
    args, code, _ = _commands(tmp_path)[command]
    status, screen = tmux.run([CLI, *args], WIDTH, env={"NO_COLOR": "1", "COLUMNS": columns}, cwd=tmp_path)
    assert status == code and "Traceback" not in screen, screen
    assert "training/vision" in screen


def test_explain_in_a_pipe_with_columns_0_prints_every_sentence():
    args, _, _ = _commands(Path())["explain"]
    out = subprocess.run([CLI, *args], capture_output=True, text=True, env={**os.environ, "COLUMNS": "0"})
    assert out.returncode == 0 and "Traceback" not in out.stderr
    assert len(out.stdout.splitlines()) > 5 and "training/vision" in out.stdout


@tmux.needs_tmux
def test_explain_never_breaks_an_option_it_suggests(tmp_path):
    args, _, _ = _commands(tmp_path)["explain"]
    status, screen = tmux.run([CLI, *args], 80, env={"NO_COLOR": "1"}, cwd=tmp_path)
    piped = subprocess.run([CLI, *args], capture_output=True, text=True, check=True).stdout
    suggested = re.findall(r"--vary '[^']*'", piped)
    assert status == 0 and suggested, piped
    for option in suggested:
        assert option in screen, (option, screen)  # whole on one line, to copy
    assert all(len(line.rstrip()) <= 80 for line in screen.splitlines() if "--vary '" not in line)


@tmux.needs_tmux
def test_a_stacked_sweep_run_names_each_axis_value(tmp_path):
    width = 80
    args, _, _ = _commands(tmp_path)["sweep"]
    args = [*args, "--vary", "training/vision.borrow_limit=100,200"]
    status, screen = tmux.run([CLI, *args], width, env={"NO_COLOR": "1"}, cwd=tmp_path)
    assert status == 0, screen
    for axis in (r"training/vision\.capacity\.ml\.p4d\.24xlarge=[26]", r"training/vision\.borrow_limit=[12]00"):
        assert len(re.findall(axis, screen)) == 4, (axis, screen)  # each of the 4 runs says which value is which
    assert not re.search(r"^\s*\d+ [26] [12]00\s*$", screen, re.MULTILINE), screen  # never a bare "1 2 100"


@tmux.needs_tmux
def test_at_80_columns_a_cause_of_waiting_is_never_squeezed_to_a_few_words_a_line(tmp_path):
    status, screen = tmux.run([CLI, "simulate", str(WIDE / "week.yaml")], 80, env={"NO_COLOR": "1"}, cwd=tmp_path)
    assert status == 0, screen
    waited = screen[screen.index("Why jobs waited"):]
    assert "behind the head of its" in waited, waited  # 22 characters on one line: the column kept >= 24 wide
    assert tmux.longest_line(screen) <= 80


@tmux.needs_tmux
@pytest.mark.parametrize("command", ["simulate", "compare", "sweep"])
def test_at_20_columns_no_header_or_name_breaks_inside_a_word(command, tmp_path):
    args, code, words = _commands(tmp_path)[command]
    status, screen = tmux.run([CLI, *args], 20, env={"NO_COLOR": "1"}, cwd=tmp_path, height=200)
    assert status == code, screen
    tokens = set(re.split(r"[\s│┃|:,]+", screen))
    for word in words:  # each header word whole: "preemptions: 11", never "preempti" / "ons"
        assert word in tokens, (word, screen)
    assert "training/vision" in tokens or "training/" in tokens, screen  # a name breaks after its "/" only
    for name in ("preempti", "foundat", "LEND_AND_B", "utilisati", "training/vis"):
        assert name not in tokens, (name, screen)
