"""How one sweep or tune run ended, as a value: every module compares these, never the words.

A ``StrEnum``: its value is the word the sweep's JSON and Parquet datasets hold (``"ok"``), so the records written
before keep reading the same, and a status read back from a dataset is made a member at that edge."""

from __future__ import annotations

from enum import StrEnum


class RunStatus(StrEnum):
    #: checked without errors and simulated: its figures are there
    OK = "ok"
    #: a rule found an error in the candidate's topology: not simulated
    INVALID = "invalid"
    #: checking or simulating it raised (``error`` says what): one bad candidate does not end the sweep
    ERROR = "error"
