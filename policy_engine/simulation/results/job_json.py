"""The per-job objects of ``simulate --format json``, written from columns a chunk of jobs at a time.

Byte for byte what ``json.dumps(record.to_json())`` writes per job (``JobRecord.to_json``, ``results.numbers``),
without a record, a dict or an encoder call per job: each field is turned into JSON text a column at a time
(numbers through orjson over a numpy array, strings through the ``json`` module's C escaper, each distinct
status, share and reason once), then one ``%`` template per job. A chunk's texts are let go before the next is
built, so a million jobs never sit in memory as text.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from json.encoder import encode_basestring_ascii
from typing import Any

import numpy as np
import orjson

from policy_engine.simulation.results.numbers import as_number

#: Jobs per chunk: large enough that numpy's and orjson's calls cost nothing per job, small enough to hold as text.
CHUNK = 8_192

#: The keys of a job's object, in ``JobRecord.to_json``'s order, and which of them are numbers.
KEYS = ("name", "share", "instance_type", "instances", "training_plan", "status", "preemptions", "reason",
        "submitted_at", "started_at", "finished_at", "wait_seconds")
_NUMBERS = frozenset({"submitted_at", "started_at", "finished_at", "wait_seconds"})  # through ``as_number``
_COUNTS = frozenset({"instances", "preemptions"})  # ints, as ``json.dumps`` writes them
#: few distinct values: each worded once per chunk (``training_plan``: a plan's name or ``None``)
_DISTINCT = frozenset({"share", "instance_type", "training_plan", "status", "reason"})
_NONE = type(None)
#: Below this magnitude Python writes a float in exponent form (``5e-05``) and orjson does not: those are
#: written as Python writes them. At or above 2**53 every float is integral, written as an int.
_SMALL, _EXACT = 1e-4, 2.0**53


def value_text(value: Any) -> str:
    """One value as ``json.dumps(as_number(value), allow_nan=False)`` writes it."""
    return json.dumps(as_number(value), allow_nan=False)


def _number_texts(values: Sequence[Any]) -> list[str]:
    """Each number (or ``None``) as ``value_text`` writes it; built-in floats and ints in bulk, anything else
    (a numpy number or a bool in a record built by hand) one by one."""
    kinds = set(map(type, values))
    if not kinds <= {float, int, _NONE}:
        return list(map(value_text, values))
    absent = np.fromiter(map(_NONE.__instancecheck__, values), dtype=bool, count=len(values)) if _NONE in kinds \
        else np.zeros(len(values), dtype=bool)
    numbers = np.array([0.0 if value is None else value for value in values] if _NONE in kinds else values,
                       dtype=np.float64)
    magnitude = np.abs(numbers)
    if not np.all(np.isfinite(numbers)) or np.any(magnitude >= _EXACT):
        return list(map(value_text, values))  # json.dumps refuses a non-finite one; a huge one is written exactly
    integral = ~absent & (numbers == np.floor(numbers))
    inexact = ~absent & ~integral
    texts = np.full(len(values), "null", dtype=object)
    if integral.any():
        texts[integral] = orjson.dumps(numbers[integral].astype(np.int64), option=orjson.OPT_SERIALIZE_NUMPY
                                       )[1:-1].decode().split(",")
    if inexact.any():
        texts[inexact] = orjson.dumps(numbers[inexact], option=orjson.OPT_SERIALIZE_NUMPY)[1:-1].decode().split(",")
        small = np.flatnonzero(inexact & (magnitude < _SMALL))
        texts[small] = [float.__repr__(value) for value in numbers[small].tolist()]
    return texts.tolist()


def _words(values: Sequence[Any], kinds: set[type]) -> list[str] | None:
    """Strings (and ``None``) with few distinct values, each written once; ``None`` if they are not all such
    (equal values of other types may be written differently: ``1`` and ``True``)."""
    if not all(kind is _NONE or issubclass(kind, str) for kind in kinds):
        return None
    words = {value: json.dumps(value) for value in set(values)}
    return list(map(words.__getitem__, values))


def _string_texts(values: Sequence[Any], distinct: bool) -> list[str]:
    """Each string as ``json.dumps`` escapes it (a ``str`` subclass, a status, as its text); anything else as
    ``value_text`` writes it. ``distinct``: few distinct values."""
    kinds = set(map(type, values))
    if kinds == {str} and not distinct:
        return list(map(encode_basestring_ascii, values))
    texts = _words(values, kinds)
    return list(map(value_text, values)) if texts is None else texts


def _raw_texts(values: Sequence[Any]) -> list[str]:
    """Each value as ``json.dumps`` writes it (a count; a field per job a caller adds), numbers as ``as_number``
    writes them (600.0 as 600): a column of numbers and nulls in bulk (``_number_texts``)."""
    kinds = set(map(type, values))
    if kinds == {int}:
        return list(map(int.__repr__, values))
    if kinds <= {float, int, _NONE} and float in kinds:
        return _number_texts(values)
    texts = _words(values, kinds)
    return [json.dumps(value, allow_nan=False) for value in values] if texts is None else texts


def _texts(key: str, values: Sequence[Any]) -> list[str]:
    if key in _COUNTS:
        return _raw_texts(values)
    if key in _NUMBERS:
        return _number_texts(values)
    return _string_texts(values, key in _DISTINCT)


def write_jobs(handle: Any, columns: Iterator[Mapping[str, Sequence[Any]]], job_fields: dict[str, Sequence[object]]
               ) -> None:
    """The job objects, separated by ``, ``: per chunk, the ``KEYS`` columns (``columns`` yields them a chunk at a
    time), then each ``job_fields`` key with its value per job (any JSON value; numbers as ``as_number`` writes
    them)."""
    extra = list(job_fields.items())
    template = "{" + ", ".join(json.dumps(key).replace("%", "%%") + ": %s"
                               for key in (*KEYS, *(name for name, _ in extra))) + "}"
    begin = 0
    for chunk in columns:
        count = len(chunk[KEYS[0]])
        texts = [_texts(key, chunk[key]) for key in KEYS]
        for _, values in extra:
            texts.append(_raw_texts(values[begin:begin + count]))
        handle.write((", " if begin else "") + ", ".join([template % row for row in zip(*texts, strict=True)]))
        begin += count
