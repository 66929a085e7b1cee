"""Candidates of a sweep: the full grid of the varied values, or a seeded random subset of it."""

from __future__ import annotations

import itertools
import json
import math
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from policy_engine.sweep.grammar import Axis


@dataclass(frozen=True)
class Candidate:
    """One point of the grid: ``index`` is its position in the full grid (stable across ``--sample`` and resume)."""

    index: int
    values: dict[str, Any]

    @property
    def key(self) -> str:
        """The candidate's identity in a results dataset: its values, in axis order, as JSON."""
        return candidate_key(self.values)


def candidate_key(values: dict[str, Any]) -> str:
    return json.dumps(list(values.items()), separators=(",", ":"))


def grid_size(axes: Sequence[Axis]) -> int:
    return math.prod(len(axis.values) for axis in axes)


def _at(axes: Sequence[Axis], index: int) -> Candidate:
    """The ``index``-th point of the full grid (last axis varies fastest, like ``itertools.product``)."""
    values: dict[str, Any] = {}
    rest = index
    for axis in reversed(axes):
        rest, position = divmod(rest, len(axis.values))
        values[axis.path] = axis.values[position]
    return Candidate(index, {axis.path: values[axis.path] for axis in axes})


def expand(axes: Sequence[Axis], sample: int | None = None, seed: int = 0) -> Iterator[Candidate]:
    """Every candidate in grid order; with ``sample``, ``sample`` distinct ones drawn with ``seed`` (grid order)."""
    total = grid_size(axes)
    if sample is None or sample >= total:
        for index, combination in enumerate(itertools.product(*(axis.values for axis in axes))):
            yield Candidate(index, dict(zip((axis.path for axis in axes), combination, strict=True)))
        return
    for index in sorted(random.Random(seed).sample(range(total), sample)):
        yield _at(axes, index)
