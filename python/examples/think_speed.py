"""The speed of a think from Python beside the same think in Rust, on one brain, in one run
(this machine's speed swings, so only the ratio measured side by side means anything).

    python python/examples/think_speed.py [--brain standin|flywire783] [--positions 64] [--repeats 5]

Prints positions a second each way and their ratio (Rust's time over Python's: 1.0 means the
Python door adds nothing)."""

import argparse
import time

import flychess

FENS = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    "8/8/8/4k3/8/8/4K3/4R3 w - - 0 1",
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--brain", default="standin")
    parser.add_argument("--positions", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    brain = flychess.Brain.load(args.brain)
    fens = [FENS[i % len(FENS)] for i in range(args.positions)]
    brain.think(fens[:2])  # warm the caches both sides share
    python, rust = [], []
    for _ in range(args.repeats):
        started = time.perf_counter()
        brain.think(fens)
        python.append(time.perf_counter() - started)
        rust.append(brain._think_seconds_in_rust(fens))
    n = args.positions
    print(
        f"{n}-position think on {brain.name}: Python {n / min(python):.1f} positions/s, "
        f"Rust {n / min(rust):.1f} positions/s, ratio {min(rust) / min(python):.3f} (best of {args.repeats})"
    )


if __name__ == "__main__":
    main()
