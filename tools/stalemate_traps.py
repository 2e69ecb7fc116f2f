#!/usr/bin/env python3
"""The stalemate-trap capacity check of issue 56 (docs/results.md, "Can the readout learn it at all?").

Reads the shipped curriculum's labels (sim/brain/data/curriculum/labels.jsonl.zst, decompressed)
and writes, as JSONL for `flychess data import`, the won positions in which a legal move
stalemates, laid out so that the imported dataset's HOLD and VAL repeat its TRAIN rows: a readout
fitted with this dataset as its curriculum is then scored on the very positions it was taught.
Needs python-chess.

    zstd -dc sim/brain/data/curriculum/labels.jsonl.zst > labels.jsonl
    python3 tools/stalemate_traps.py labels.jsonl traps.jsonl
    flychess data import --jsonl traps.jsonl --out DATA/traps.flyd --source "stalemate traps, HOLD = TRAIN"
    flychess train --name trapfit --curriculum 0.5 --curriculum-dataset DATA/traps.flyd
    flychess eval --fly trapfit --against flywire --no-controls --curriculum DATA/traps.flyd --json
"""
import json
import sys

import chess

HOLD, VAL, MOST = 4096, 2048, 4096


def won(move):
    return (move.get("mate") is not None and move["mate"] > 0) or (move.get("cp") is not None and move["cp"] >= 500)


def has_stalemating_move(board):
    for m in board.legal_moves:
        board.push(m)
        stalemate = board.is_stalemate()
        board.pop()
        if stalemate:
            return True
    return False


def main(labels, out):
    traps = []
    with open(labels) as f:
        for line in f:
            row = json.loads(line)
            if row["moves"] and won(row["moves"][0]) and has_stalemating_move(chess.Board(row["fen"])):
                row.pop("i", None)
                row.pop("depth", None)
                traps.append(row)
    rows = traps[:MOST]
    if not rows:
        sys.exit(f"{labels}: no won position with a stalemating move")
    with open(out, "w") as f:
        for k in range(HOLD):
            f.write(json.dumps(rows[k % len(rows)]) + "\n")
        for k in range(VAL):
            f.write(json.dumps(rows[k % len(rows)]) + "\n")
        for r in rows:
            f.write(json.dumps(r) + "\n")
    print(f"{len(traps)} traps found, {len(rows)} written as TRAIN (HOLD and VAL repeat them) to {out}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: stalemate_traps.py LABELS.jsonl OUT.jsonl")
    main(sys.argv[1], sys.argv[2])
