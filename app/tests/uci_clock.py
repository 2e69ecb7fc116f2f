"""Drives `flychess uci` on the clock and reports what the engine itself said (issue 71).

Usage: uci_clock.py STOCKFISH FLYCHESS [ARG...]   (the command line of `flychess uci`)

Nothing here is timed by this script's own clock: each answer is described by the engine's own
`info` (its `time`, the `nodes` it stopped at, its `info string`s) and by the order of the lines
(a held `bestmove` only after `stop`), so a busy machine changes the figures, not the verdict.

1. python-chess chooses the players docs/uci.md offers: `flywire+imagination` and
   `flywire+search64` from the `Player` combo, `flywire+search100000` as `Player` flywire with
   `Search` 100000; each plays 3 moves at `go movetime 50` and 3 at `go movetime 300`.
2. The bare pipe: `flywire+imagination` under `go movetime 1` and `go movetime 60000`;
   `flywire+search100000` under `go nodes 40`, `go movetime 1` and `go movetime 300`, then
   `go infinite` for about 3 s before `stop`; the plain fly under `go infinite` for about 2 s.
Prints one JSON object; the Rust test (app/tests/uci_clock.rs) checks it.
"""

import json
import subprocess
import sys
import threading
import time

import chess
import chess.engine


def chosen_by_python_chess(fly_cmd):
    """Each player selected through configure, a few answers each with the engine's own info."""
    fly = chess.engine.SimpleEngine.popen_uci(fly_cmd, timeout=300)
    out = {"players": list(fly.options["Player"].var), "options": sorted(fly.options.keys())}
    search = fly.options.get("Search")
    out["search_option"] = None if search is None else {"type": search.type, "min": search.min, "max": search.max}
    choices = [
        ("flywire+imagination", {"Player": "flywire+imagination"}),
        ("flywire+search64", {"Player": "flywire+search64"}),
        ("flywire+search100000", {"Player": "flywire", "Search": 100000}),
    ]
    out["answers"] = {}
    try:
        for name, options in choices:
            try:
                if "Search" in fly.options:
                    fly.configure({"Search": 0})
                fly.configure(options)
            except chess.engine.EngineError as e:
                out["answers"][name] = {"refused": str(e)}
                continue
            fly.ping()
            seen = {}
            for movetime_ms in (50, 300):
                board = chess.Board()
                answers = []
                for _ in range(3):
                    result = fly.play(board, chess.engine.Limit(time=movetime_ms / 1000), info=chess.engine.INFO_ALL)
                    if result.move is None or result.move not in board.legal_moves:
                        raise SystemExit(f"{name}: illegal or no move {result.move} in {board.fen()}")
                    answers.append({"time_ms": round(1000 * result.info.get("time", -1.0)), "nodes": result.info.get("nodes")})
                    board.push(result.move)
                    board.push(next(iter(board.legal_moves)))
                seen[str(movetime_ms)] = answers
            out["answers"][name] = seen
    finally:
        fly.quit()
    return out


class Pipe:
    """The engine on a bare pipe, its output read on a thread of its own."""

    def __init__(self, cmd):
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.lines = []
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            with self.cond:
                self.lines.append(line.strip())
                self.cond.notify_all()
        with self.cond:
            self.lines.append(None)
            self.cond.notify_all()

    def send(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def mark(self):
        with self.cond:
            return len(self.lines)

    def wait_for(self, prefix, since, timeout=300):
        """The lines from `since` up to and including the first that starts with `prefix`."""
        deadline = time.monotonic() + timeout
        with self.cond:
            i = since
            while True:
                while i < len(self.lines):
                    line = self.lines[i]
                    i += 1
                    if line is None:
                        raise SystemExit(f"the engine ended before {prefix}: {self.lines[since:]}")
                    if line.startswith(prefix):
                        return self.lines[since:i]
                left = deadline - time.monotonic()
                if left <= 0:
                    raise SystemExit(f"no {prefix} within {timeout} s: {self.lines[since:]}")
                self.cond.wait(left)

    def go(self, position, go):
        """One think: its info lines, strings and bestmove."""
        self.send(position)
        at = self.mark()
        self.send(go)
        return described(self.wait_for("bestmove", at))


def described(lines):
    infos = [line for line in lines if line.startswith("info") and not line.startswith("info string")]
    last = {}
    for line in infos:
        words = line.split()
        for key in ("time", "nodes"):
            if key in words:
                last[key] = int(words[words.index(key) + 1])
    return {
        "time_ms": last.get("time"),
        "nodes": last.get("nodes"),
        "strings": [line[len("info string "):] for line in lines if line.startswith("info string")],
        "bestmove": lines[-1],
    }


def infinite(e, seconds):
    """`go infinite`, `isready` after `seconds`, then `stop`: the info times before it, any
    bestmove before it (there must be none), and the answer after it."""
    at = e.mark()
    e.send("go infinite")
    time.sleep(seconds)
    e.send("isready")
    before_stop = e.wait_for("readyok", at)
    at = e.mark()
    e.send("stop")
    after_stop = e.wait_for("bestmove", at)
    infos = [line.split() for line in before_stop if line.startswith("info") and not line.startswith("info string")]
    return {
        "info_times_ms": [int(w[w.index("time") + 1]) for w in infos if "time" in w],
        "bestmove_before_stop": [line for line in before_stop if line.startswith("bestmove")],
        "after_stop": described(after_stop),
    }


def on_the_pipe(fly_cmd):
    e = Pipe(fly_cmd)
    out = {}
    e.send("uci")
    e.wait_for("uciok", 0)
    after_e4 = "position startpos moves e2e4"
    after_e4_e5 = "position startpos moves e2e4 e7e5"

    e.send("setoption name Player value flywire+imagination")
    at = e.mark()
    e.send("isready")
    e.wait_for("readyok", at)
    out["imagination_movetime_1"] = e.go(after_e4, "go movetime 1")
    out["imagination_movetime_60000"] = e.go(after_e4, "go movetime 60000")

    e.send("setoption name Player value flywire")
    e.send("setoption name Search value 100000")
    at = e.mark()
    e.send("isready")
    e.wait_for("readyok", at)
    out["search_nodes_40"] = e.go(after_e4, "go nodes 40")
    out["search_movetime_1"] = e.go(after_e4, "go movetime 1")
    out["search_movetime_300"] = e.go(after_e4, "go movetime 300")

    # go infinite: what comes before `stop` (sent about 3 s later), then the answer; the search,
    # then the plain fly (whose think ends at once, its answer held).
    e.send(after_e4_e5)
    out["infinite"] = infinite(e, 3.2)
    e.send("setoption name Search value 0")
    out["infinite_fly"] = infinite(e, 2.2)
    e.send("quit")
    e.p.wait(timeout=30)
    out["exit"] = e.p.returncode
    return out


def main():
    fly_cmd = sys.argv[2:]
    out = {"python_chess": chosen_by_python_chess(fly_cmd), "pipe": on_the_pipe(fly_cmd)}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
