#!/usr/bin/env python3
"""How fast `flychess uci` answers python-chess under `movetime`, with another CPU job beside it
(issue 71's closing measurement). Not a test: it prints figures, and what a busy machine does to
them is the point.

For each player it starts the engine afresh, chooses the player through `configure` (the
`Player` combo, with `Search` for a search of any size), sends `isready` (as a GUI does after
setting options), then plays `--plays` moves at each movetime with `play(board,
Limit(time=T))`, the opponent's reply the first legal move. Each answer is timed twice: the wall
time of `play` here (python-chess's round trip) and the engine's own `info time`. Meanwhile
`--load` runs beside it: `yes` (one busy process at the same priority, the default), `stockfish`
(`nice -n 10 stockfish bench`, restarted when it ends), or `none`.

Usage (python-chess 1.11 installed, e.g. the CI's venv):
  /work/target/ci-venv/bin/python3 tools/uci_clock_probe.py \\
      [--flychess target/release/flychess] [--data DIR] [--plays 20] [--movetimes 50,200] \\
      [--load yes|stockfish|none] [--json] [PLAYER ...]
PLAYER defaults to flywire flywire+imagination flywire+search64 flywire+search100000.
"""

import argparse
import json
import re
import shutil
import statistics
import subprocess
import threading
import time

import chess
import chess.engine


def options_for(name, engine):
    """The `configure` that chooses `name`: the combo entry when there is one, else the base
    player with the `Search` spin for a trailing `+searchN`."""
    combo = engine.options["Player"].var if "Player" in engine.options else []
    if name in combo:
        return {"Player": name, **({"Search": 0} if "Search" in engine.options else {})}
    m = re.fullmatch(r"(.+)\+search(\d+)", name)
    if m and "Search" in engine.options:
        return {"Player": m.group(1), "Search": int(m.group(2))}
    raise SystemExit(f"{name} cannot be chosen through the options: not in the Player combo ({len(combo)} names)")


class Load:
    """Another CPU job beside the engine, until stopped."""

    def __init__(self, kind):
        self.kind, self.proc, self.stopped = kind, None, threading.Event()
        if kind == "none":
            return
        if kind == "yes":
            self.proc = subprocess.Popen(["yes"], stdout=subprocess.DEVNULL)
            return
        stockfish = shutil.which("stockfish") or "/usr/games/stockfish"

        def run():
            while not self.stopped.is_set():
                self.proc = subprocess.Popen(["nice", "-n", "10", stockfish, "bench", "64", "1", "16"],
                                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                self.proc.wait()

        threading.Thread(target=run, daemon=True).start()

    def stop(self):
        self.stopped.set()
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()


def measure(cmd, name, movetimes_ms, plays):
    engine = chess.engine.SimpleEngine.popen_uci(cmd, timeout=600)
    try:
        engine.configure(options_for(name, engine))
        engine.ping()
        rows = []
        for movetime in movetimes_ms:
            board = chess.Board()
            walls, own, strings = [], [], set()
            for _ in range(plays):
                started = time.monotonic()
                result = engine.play(board, chess.engine.Limit(time=movetime / 1000), info=chess.engine.INFO_ALL)
                walls.append(1000 * (time.monotonic() - started))
                own.append(1000 * result.info.get("time", float("nan")))
                s = result.info.get("string", "")
                if "left out" in s:
                    strings.add(s.split(":")[0])
                if result.move is None or result.move not in board.legal_moves:
                    raise SystemExit(f"{name}: illegal or no move {result.move} in {board.fen()}")
                board.push(result.move)
                if board.is_game_over():
                    board = chess.Board()
                    continue
                board.push(next(iter(board.legal_moves)))
                if board.is_game_over():
                    board = chess.Board()
            rows.append({
                "player": name, "movetime_ms": movetime, "plays": plays,
                "slowest_ms": max(walls), "first_ms": walls[0], "median_ms": statistics.median(walls),
                "slowest_own_info_time_ms": max(own),
                "within_movetime_plus_100": max(walls) <= movetime + 100,
            })
        return rows
    finally:
        engine.quit()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("players", nargs="*", default=["flywire", "flywire+imagination", "flywire+search64", "flywire+search100000"])
    ap.add_argument("--flychess", default="target/release/flychess")
    ap.add_argument("--data", help="the data folder (default: flychess's own)")
    ap.add_argument("--engine", default="cpu", help="the Engine option (auto, cpu, gpu)")
    ap.add_argument("--plays", type=int, default=20)
    ap.add_argument("--movetimes", default="50,200", help="milliseconds, comma-separated")
    ap.add_argument("--load", choices=["yes", "stockfish", "none"], default="yes")
    ap.add_argument("--json", action="store_true", help="one JSON object instead of the table")
    args = ap.parse_args()
    cmd = [args.flychess] + (["--data", args.data] if args.data else []) + ["uci", "--engine", args.engine]
    movetimes = [int(t) for t in args.movetimes.split(",")]
    load = Load(args.load)
    try:
        rows = [r for name in args.players for r in measure(cmd, name, movetimes, args.plays)]
    finally:
        load.stop()
    if args.json:
        print(json.dumps({"load": args.load, "rows": rows}, indent=1))
        return
    print(f"{args.plays} python-chess play() calls per row, load beside: {args.load}; wall time of play() in ms")
    print(f"| player | movetime | slowest | first | median | slowest own `info time` | within movetime + 100 |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for r in rows:
        print(f"| {r['player']} | {r['movetime_ms']} | {r['slowest_ms']:.0f} | {r['first_ms']:.0f} | {r['median_ms']:.0f} | "
              f"{r['slowest_own_info_time_ms']:.0f} | {'yes' if r['within_movetime_plus_100'] else 'NO'} |")


if __name__ == "__main__":
    main()
