"""Fly Chess from Python: a whole fruit-fly brain (FlyWire v783) that plays chess.

The brain, its 12 steps of rates as numpy arrays, the flies and the players, bound to the
program's own Rust crates (the same engines, bit for bit, as ``flychess`` on the command line)::

    import flychess
    brain = flychess.Brain.load("flywire783")
    neurons = brain.neurons.to_pandas()          # root id, type, class, region, x/y/z, ...
    rates = brain.think(["rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"])
    rates.shape                                   # (1, 12, len(brain)), float32
    fly = flychess.Fly.load("flywire", brain=brain)
    fly.policy(fen)                               # {"e7e5": 0.08, ...}
    flychess.Player("flywire+search64", brain=brain).choose(fen)

Errors are Python exceptions naming their input: a bad FEN is a ValueError, an unknown fly or
player a KeyError listing the known ones, a missing data folder a FileNotFoundError.
"""

from __future__ import annotations

import os
from typing import Iterable, Optional, Sequence, Union

import numpy as np
import pyarrow as pa

from . import _native
from ._native import Brain, Fly, Player, STEPS

__all__ = ["Brain", "Fly", "Player", "STEPS", "export_think", "think_table"]


def think_table(
    brain: Brain,
    fens: Sequence[str],
    steps: Union[int, Sequence[int], None] = None,
    neurons: Optional[Sequence[int]] = None,
    engine: str = "cpu",
) -> pa.Table:
    """The rates of ``brain.think`` as a long pyarrow Table: position, step (1-based), neuron
    (index), root_id, rate (float32), one row per position, step and neuron asked for."""
    rates = brain.think(list(fens), steps=steps, engine=engine, neurons=None if neurons is None else list(neurons))
    batch, n_steps, n_neurons = rates.shape
    step_numbers = np.arange(1, n_steps + 1) if steps is None or isinstance(steps, int) else np.asarray(list(steps))
    chosen = np.arange(n_neurons) if neurons is None else np.asarray(list(neurons))
    root_ids = np.asarray(brain._neuron_columns()["root_id"])[chosen]
    return pa.table(
        {
            "position": np.repeat(np.arange(batch, dtype=np.uint32), n_steps * n_neurons),
            "step": np.tile(np.repeat(step_numbers.astype(np.uint8), n_neurons), batch),
            "neuron": np.tile(chosen.astype(np.uint32), batch * n_steps),
            "root_id": np.tile(root_ids, batch * n_steps),
            "rate": rates.reshape(-1),
        }
    )


def export_think(
    fens: Sequence[str],
    path: Union[str, os.PathLike],
    brain: Optional[Brain] = None,
    steps: Union[int, Sequence[int], None] = None,
    neurons: Optional[Sequence[int]] = None,
    engine: str = "cpu",
) -> str:
    """Writes the rates of ``fens`` (``think_table``'s long table) to ``path``: Parquet when it
    ends in .parquet, else Feather (Arrow IPC, what ``pyarrow.feather`` and R's arrow read).
    ``brain`` defaults to the default FlyWire brain. Returns the path written."""
    brain = brain if brain is not None else Brain.load("flywire783")
    table = think_table(brain, fens, steps=steps, neurons=neurons, engine=engine)
    path = os.fspath(path)
    if path.endswith(".parquet"):
        import pyarrow.parquet as pq

        pq.write_table(table, path)
    else:
        import pyarrow.feather as feather

        feather.write_feather(table, path)
    return path
