# Type stubs of the flychess package (see _native.pyi for the classes).
from os import PathLike
from typing import Optional, Sequence, Union

import pyarrow as pa

from ._native import STEPS as STEPS, Brain as Brain, Fly as Fly, Player as Player

def think_table(
    brain: Brain,
    fens: Sequence[str],
    steps: Union[int, Sequence[int], None] = None,
    neurons: Optional[Sequence[int]] = None,
    engine: str = "cpu",
) -> pa.Table: ...
def export_think(
    fens: Sequence[str],
    path: Union[str, PathLike],
    brain: Optional[Brain] = None,
    steps: Union[int, Sequence[int], None] = None,
    neurons: Optional[Sequence[int]] = None,
    engine: str = "cpu",
) -> str: ...
