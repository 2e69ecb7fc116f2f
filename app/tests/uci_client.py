"""Drives `flychess uci` with python-chess's engine client (a UCI client nobody here wrote).

Usage: uci_client.py STOCKFISH FLYCHESS [ARG...]

1. A full game: the fly (White, 60 s + 0.1 s a move, its clock kept here from the wall time each
   move took) against Stockfish at skill level 0 on a 5 s + 0.05 s clock, to a result by the rules
   (or 300 moves, scored as the cap).
2. An analysis of one position with MultiPV 3: the three moves and their scores.
3. The Player option switched to Charles: the move and the info string it printed.
Prints one JSON object with what it saw; the Rust test checks it against the fly's own policy.
"""

import json
import sys
import time

import chess
import chess.engine


def main():
    stockfish_path, fly_cmd = sys.argv[1], sys.argv[2:]
    out = {}
    fly = chess.engine.SimpleEngine.popen_uci(fly_cmd, timeout=300)
    sf = chess.engine.SimpleEngine.popen_uci(stockfish_path, timeout=60)
    try:
        out["id"] = fly.id.get("name")
        out["options"] = sorted(fly.options.keys())
        out["players"] = list(fly.options["Player"].var) if "Player" in fly.options else []
        sf.configure({"Skill Level": 0, "Threads": 1, "Hash": 16})

        # 1. A game with clocks.
        board = chess.Board()
        clock = {chess.WHITE: 60.0, chess.BLACK: 5.0}
        inc = {chess.WHITE: 0.1, chess.BLACK: 0.05}
        slowest = 0.0
        flagged = None
        while not board.is_game_over(claim_draw=True) and board.ply() < 600:
            side = board.turn
            engine = fly if side == chess.WHITE else sf
            limit = chess.engine.Limit(
                white_clock=clock[chess.WHITE], black_clock=clock[chess.BLACK],
                white_inc=inc[chess.WHITE], black_inc=inc[chess.BLACK])
            started = time.monotonic()
            result = engine.play(board, limit)
            spent = time.monotonic() - started
            if side == chess.WHITE:
                slowest = max(slowest, spent)
            clock[side] -= spent
            if clock[side] < 0 and flagged is None:
                flagged = "white" if side == chess.WHITE else "black"
            clock[side] += inc[side]
            if result.move is None or result.move not in board.legal_moves:
                raise SystemExit(f"illegal or no move {result.move} in {board.fen()}")
            board.push(result.move)
        outcome = board.outcome(claim_draw=True)
        out["game"] = {
            "result": board.result(claim_draw=True) if outcome else "*",
            "termination": outcome.termination.name if outcome else "move cap",
            "plies": board.ply(),
            "flagged": flagged,
            "fly_clock_left": clock[chess.WHITE],
            "fly_slowest_move_s": slowest,
            "pgn_moves": " ".join(m.uci() for m in board.move_stack),
        }

        # 2. An analysis with MultiPV 3.
        fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
        infos = fly.analyse(chess.Board(fen), chess.engine.Limit(time=2.0), multipv=3, info=chess.engine.INFO_ALL)
        out["analysis"] = {
            "fen": fen,
            "moves": [i["pv"][0].uci() for i in infos],
            "multipv": [i.get("multipv") for i in infos],
            "scores": [i["score"].white().score(mate_score=100000) for i in infos],
        }

        # 3. The Player option switched to Charles.
        fly.configure({"Player": "charles"})
        start = chess.Board()
        played = fly.play(start, chess.engine.Limit(time=1.0), info=chess.engine.INFO_ALL)
        out["charles"] = {"move": played.move.uci(), "string": played.info.get("string", "")}
    finally:
        fly.quit()
        sf.quit()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
