"""Pausing Python's cyclic garbage collector around bulk work (loading, simulating, building results)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector: with a million live jobs its scans cost more than the simulation.

    Nothing the simulator allocates per job or event forms a reference cycle, so no garbage is kept.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
