"""The command group: every listed command loads, and a check does not pay for the simulator."""

from __future__ import annotations

import subprocess
import sys

from click.testing import CliRunner

from policy_engine.cli import COMMANDS, main


def test_every_listed_command_loads_under_its_name():
    for name in COMMANDS:
        command = main.get_command(None, name)  # type: ignore[arg-type]
        assert command is not None and command.name == name


def test_help_lists_every_command_and_unknown_command_exits_2():
    runner = CliRunner()
    listing = runner.invoke(main, ["--help"]).output
    assert all(name in listing for name in COMMANDS)
    assert runner.invoke(main, ["no-such-command"]).exit_code == 2


def test_check_does_not_import_the_simulator_or_matplotlib():
    code = (
        "import sys\nfrom policy_engine.cli import main\n"
        "try:\n    main(['check'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith(('policy_engine.simulation', 'matplotlib'))))"
    )
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert output.strip().splitlines()[-1] == "[]"
