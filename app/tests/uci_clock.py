"""Drives `flychess uci` with a search player through python-chess, on the clock.

Usage: uci_clock.py STOCKFISH FLYCHESS [ARG...]   (the command line of `flychess uci`)

1. `flywire+search64` under `go movetime 200`, five positions: the wall time of each answer.
2. `flywire+search64` (White) on a 10 s + 0.1 s clock against Stockfish at skill level 0
   (5 s + 0.05 s), the clocks kept here from the wall time each move took: whether White's flag
   fell, its slowest move and the time left.
3. `flywire+search100000` under `go movetime 100`: the wall time of `bestmove`; then under
   `go infinite`, how long `isready` and `stop` take to be answered, read off the raw pipe.
Prints one JSON object; the Rust test (app/tests/uci_clock.rs) checks it.
"""

import json
import subprocess
import sys
import time

import chess
import chess.engine


def timed_moves(fly, board, limit, count):
    times = []
    for _ in range(count):
        started = time.monotonic()
        result = fly.play(board, limit, info=chess.engine.INFO_ALL)
        times.append(time.monotonic() - started)
        if result.move is None or result.move not in board.legal_moves:
            raise SystemExit(f"illegal or no move {result.move} in {board.fen()}")
        board.push(result.move)
        board.push(next(iter(board.legal_moves)))
    return times, result.info


def game(fly, sf):
    board = chess.Board()
    clock = {chess.WHITE: 10.0, chess.BLACK: 5.0}
    inc = {chess.WHITE: 0.1, chess.BLACK: 0.05}
    slowest, flagged, least_left = 0.0, None, 10.0
    while not board.is_game_over(claim_draw=True) and board.ply() < 160:
        side = board.turn
        engine = fly if side == chess.WHITE else sf
        limit = chess.engine.Limit(white_clock=clock[chess.WHITE], black_clock=clock[chess.BLACK],
                                   white_inc=inc[chess.WHITE], black_inc=inc[chess.BLACK])
        started = time.monotonic()
        result = engine.play(board, limit)
        spent = time.monotonic() - started
        clock[side] -= spent
        if side == chess.WHITE:
            slowest = max(slowest, spent)
            least_left = min(least_left, clock[side])
        if clock[side] < 0 and flagged is None:
            flagged = "white" if side == chess.WHITE else "black"
        clock[side] += inc[side]
        if result.move is None or result.move not in board.legal_moves:
            raise SystemExit(f"illegal or no move {result.move} in {board.fen()}")
        board.push(result.move)
    return {"plies": board.ply(), "flagged": flagged, "slowest_white_move_s": slowest,
            "least_white_clock_s": least_left, "white_clock_at_end_s": clock[chess.WHITE]}


def raw_pipe(fly_cmd):
    """isready and stop while a 100,000-simulation search thinks, on the bare pipe."""
    p = subprocess.Popen(fly_cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

    def send(line):
        p.stdin.write(line + "\n")
        p.stdin.flush()

    def wait_for(prefix):
        started = time.monotonic()
        while True:
            line = p.stdout.readline()
            if not line:
                raise SystemExit(f"the engine ended before {prefix}")
            if line.startswith(prefix):
                return time.monotonic() - started, line.strip()

    send("uci")
    wait_for("uciok")
    send("setoption name Player value flywire+search100000")
    send("isready")
    wait_for("readyok")
    send("position startpos moves e2e4")
    send("go movetime 100")
    movetime_s, movetime_line = wait_for("bestmove")
    send("position startpos moves e2e4 e7e5")
    send("go infinite")
    time.sleep(0.5)
    send("isready")
    isready_s, _ = wait_for("readyok")
    send("stop")
    stop_s, stop_line = wait_for("bestmove")
    started = time.monotonic()
    send("quit")
    p.wait(timeout=10)
    quit_s = time.monotonic() - started
    return {"movetime_100_bestmove_s": movetime_s, "movetime_100_line": movetime_line,
            "isready_while_thinking_s": isready_s, "stop_s": stop_s, "stop_line": stop_line,
            "quit_s": quit_s}


def main():
    stockfish_path, fly_cmd = sys.argv[1], sys.argv[2:]
    out = {}
    fly = chess.engine.SimpleEngine.popen_uci(fly_cmd, timeout=300)
    sf = chess.engine.SimpleEngine.popen_uci(stockfish_path, timeout=60)
    try:
        sf.configure({"Skill Level": 0, "Threads": 1, "Hash": 16})
        fly.configure({"Player": "flywire+search64"})
        fly.ping()
        times, info = timed_moves(fly, chess.Board(), chess.engine.Limit(time=0.2), 5)
        out["movetime_200_s"] = times
        out["movetime_200_nodes"] = info.get("nodes")
        out["game"] = game(fly, sf)
    finally:
        fly.quit()
        sf.quit()
    out["raw"] = raw_pipe(fly_cmd)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
