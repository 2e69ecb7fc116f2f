# Type stubs of the native half of flychess (python/src/lib.rs), for editors and type checkers.
from os import PathLike
from typing import Dict, List, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt
import pyarrow as pa

STEPS: int

class Brain:
    """A brain made ready to think (built from its tables the first time)."""

    @staticmethod
    def load(which: str = "flywire783", data: Optional[Union[str, PathLike]] = None, seed: int = 1) -> Brain:
        """"flywire783" (the default brain), "standin" (synthetic, from `seed`), or a folder of
        FlyWire v783 tables. `data`: the data folder (default $FLYCHESS_DATA, else the user's)."""
    @property
    def checksum(self) -> str: ...
    @property
    def name(self) -> str: ...
    def __len__(self) -> int: ...
    @property
    def neurons(self) -> pa.Table:
        """index, root_id, type, class, super_class, side, region, transmitter, sign,
        x_um, y_um, z_um, eye_slot, descending."""
    def _neuron_columns(self) -> Dict[str, Union[np.ndarray, List[str]]]: ...
    @property
    def connections(self) -> Dict[str, np.ndarray]:
        """Incoming CSR: indptr (uint32, n+1), indices (uint32 senders), weight (float32), sign (int8)."""
    @property
    def positions(self) -> str:
        """What x_um/y_um/z_um are: the release's positions or a layout made from the wiring."""
    @property
    def regions(self) -> List[str]: ...
    def think(
        self,
        fens: Sequence[str],
        steps: Union[int, Sequence[int], None] = None,
        engine: str = "cpu",
        neurons: Optional[Sequence[int]] = None,
    ) -> npt.NDArray[np.float32]:
        """float32 [batch, steps, neurons]; steps 1-based; GIL released; bit for bit the CLI's."""
    def eye(self, fen: str) -> npt.NDArray[np.float32]:
        """The photoreceptors' drive, over every neuron (0 elsewhere)."""
    def signal(self, fens: Sequence[str]) -> Dict[str, List[float]]:
        """Per region, per step: mean over its neurons of the rates' spread across the positions."""

class Fly:
    @staticmethod
    def load(name: str, brain: Optional[Brain] = None, data: Optional[Union[str, PathLike]] = None) -> Fly: ...
    @property
    def name(self) -> str: ...
    @property
    def meta(self) -> dict: ...
    @property
    def brain(self) -> Brain: ...
    def features(self, fens: Sequence[str]) -> npt.NDArray[np.float32]:
        """float32 [batch, descending]: the readout's inputs."""
    def policy(self, fen: str) -> Dict[str, float]:
        """Every legal move (UCI) with its probability."""
    def value(self, fen: str) -> float: ...

class Player:
    def __init__(self, name: str, brain: Optional[Brain] = None, data: Optional[Union[str, PathLike]] = None) -> None: ...
    @property
    def name(self) -> str: ...
    @property
    def id(self) -> str: ...
    def choose(self, fen: str, seed: int = 1, moves: Optional[Sequence[str]] = None) -> str:
        """Its move (UCI) after `moves` (UCI) played from `fen`; the same player (its memory of
        the game, one Stockfish process) answers every move until new_game() or another seed."""
    def new_game(self) -> None:
        """The next choose() starts a new game."""

def _panic_for_test() -> None: ...
