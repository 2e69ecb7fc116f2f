"""The Python package against the program itself (issue 57): the same rates bit for bit as
`flychess brain think`, the same policy as `flychess analyse --json`, shapes and dtypes, the
exceptions that name their input, no panic across the boundary, a player that keeps its game,
and the GIL released while the brain works. (The speed of a think from Python beside the same
think in Rust is a measurement, not a test: python/examples/think_speed.py prints it.)

The stand-in brain keeps it quick; FLYCHESS_BIN is the program (.ci/run sets it) and the data
folder a fresh temporary one."""

import json
import os
import subprocess
import threading
import time

import numpy as np
import pyarrow.feather as feather
import pytest

import flychess

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
FENS = [
    START,
    "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    "8/8/8/4k3/8/8/4K3/4R3 w - - 0 1",
]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return tmp_path_factory.mktemp("data")


@pytest.fixture(scope="module")
def brain(data):
    return flychess.Brain.load("standin", data=str(data), seed=1)


def program(data, *args):
    binary = os.environ.get("FLYCHESS_BIN", "flychess")
    out = subprocess.run([binary, "--data", str(data), *args], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_think_equals_the_programs_rates_bit_for_bit(brain, data, tmp_path):
    cli = tmp_path / "cli.feather"
    args = ["brain", "think", "--brain", "standin", "--seed", "1", "--out", str(cli)]
    for fen in FENS[:3]:
        args += ["--fen", fen]
    program(data, *args)
    theirs = feather.read_table(str(cli))
    ours = flychess.think_table(brain, FENS[:3])
    assert theirs.column_names == ours.column_names == ["position", "step", "neuron", "root_id", "rate"]
    for name in ["position", "step", "neuron", "root_id"]:
        assert np.array_equal(theirs[name].to_numpy(), ours[name].to_numpy()), name
    # Bit for bit: the floats' bits, not a tolerance.
    assert np.array_equal(theirs["rate"].to_numpy().view(np.uint32), ours["rate"].to_numpy().view(np.uint32))
    # A selection of neurons and steps: the same floats as the whole think's, only those.
    picked = [0, 5, len(brain) - 1]
    some = brain.think(FENS[:3], steps=[3, 12], neurons=picked)
    whole = brain.think(FENS[:3])
    assert np.array_equal(some.view(np.uint32), whole[:, [2, 11]][:, :, picked].view(np.uint32))
    # export_think writes the same table (Feather and Parquet).
    def same(table):
        return table.column_names == theirs.column_names and all(table[n].equals(theirs[n]) for n in theirs.column_names)

    assert same(feather.read_table(flychess.export_think(FENS[:3], tmp_path / "py.feather", brain=brain)))
    import pyarrow.parquet as pq

    assert same(pq.read_table(flychess.export_think(FENS[:3], tmp_path / "py.parquet", brain=brain)))


def test_shapes_dtypes_and_tables(brain):
    rates = brain.think(FENS)
    assert rates.dtype == np.float32 and rates.shape == (4, flychess.STEPS, len(brain))
    assert brain.think(FENS[:1], steps=4).shape == (1, 4, len(brain))
    neurons = brain.neurons
    assert neurons.num_rows == len(brain)
    for column in ["index", "root_id", "type", "class", "super_class", "side", "region", "x_um", "eye_slot", "descending"]:
        assert column in neurons.column_names, column
    assert set(neurons["region"].to_pylist()) <= set(brain.regions)
    assert brain.positions and np.isfinite(np.asarray(neurons["x_um"])).any()
    c = brain.connections
    assert c["indptr"].shape == (len(brain) + 1,) and c["indptr"][-1] == len(c["indices"]) == len(c["weight"]) == len(c["sign"])
    assert set(np.unique(c["sign"])) <= {-1, 1}
    eye = brain.eye(START)
    assert eye.shape == (len(brain),) and eye.dtype == np.float32
    placed = np.asarray(neurons["eye_slot"]) >= 0
    assert eye[~placed].sum() == 0 and eye[placed].sum() > 0, "only photoreceptors are driven"
    signal = brain.signal(FENS)
    assert set(signal) == set(brain.regions) and all(len(v) == flychess.STEPS for v in signal.values())


def test_policy_equals_the_programs_analysis(brain, data):
    fly = flychess.Fly.load("backprop", brain=brain)
    said = json.loads(program(data, "analyse", "--brain", "standin", "--seed", "1", "--fly", "backprop", "--fen", FENS[2], "--json"))
    theirs = {m["uci"]: m["probability"] for m in said["moves"]}
    ours = fly.policy(FENS[2])
    assert set(ours) == set(theirs)
    for uci, p in ours.items():
        # The same float32 (the JSON prints it shortest, Python holds it exactly).
        assert np.float32(p) == np.float32(theirs[uci]), (uci, p, theirs[uci])
    assert abs(sum(ours.values()) - 1) < 1e-5
    assert -1 <= fly.value(FENS[2]) <= 1
    features = fly.features(FENS)
    assert features.dtype == np.float32 and features.shape[0] == 4
    assert fly.meta["name"] == "backprop"


def test_players_by_every_name_the_program_takes(brain):
    for name in ["random", "greedy", "backprop", "backprop+search8"]:
        move = flychess.Player(name, brain=brain).choose(FENS[1])
        assert len(move) in (4, 5), (name, move)
    assert flychess.Player("backprop", brain=brain).id != flychess.Player("backprop+search8", brain=brain).id


def test_a_player_keeps_its_game_and_is_reused_across_moves(brain):
    player = flychess.Player("backprop", brain=brain)
    # The game is the start position and the moves after it, as a UCI GUI sends it: the answer
    # is Black's, in the position after 1.e4.
    answer = player.choose(START, moves=["e2e4"])
    assert answer == flychess.Player("backprop", brain=brain).choose(FENS[1]), "the position after the moves"
    assert answer[1] in "78", f"a move of Black's: {answer}"
    # The same player answers the game's next move; a move that is not legal is named.
    again = player.choose(START, moves=["e2e4", answer, "g1f3"])
    assert len(again) in (4, 5)
    with pytest.raises(ValueError) as e:
        player.choose(START, moves=["e2e4", "e2e4"])
    assert "move 2" in str(e.value)
    player.new_game()
    assert player.choose(START, moves=["e2e4"]) == answer, "a new game answers the same position alike"
    # Stockfish: one process for the whole game, kept between moves.
    if os.environ.get("FLYCHESS_CI") or os.path.exists("/usr/games/stockfish"):
        sf = flychess.Player("stockfish", brain=brain)
        moves = []
        for _ in range(4):
            moves.append(sf.choose(START, moves=moves))
        assert len(moves) == 4


def beside(call):
    """How many times another Python thread counted while `call` ran, and how long it took."""
    counted, stop = [0], threading.Event()

    def count():
        while not stop.is_set():
            counted[0] += 1

    thread = threading.Thread(target=count)
    thread.start()
    time.sleep(0.05)
    before, started = counted[0], time.perf_counter()
    call()
    took = time.perf_counter() - started
    during = counted[0] - before
    stop.set()
    thread.join()
    return during, took


def test_another_thread_runs_while_the_brain_thinks_and_a_player_loads(brain):
    # Held, the GIL would stop the counting thread for the whole call (a few counts at most, in
    # the moments before the call takes it); released, it counts freely.
    for what, call in [
        ("think", lambda: brain.think(FENS * 16)),
        ("Player(...)", lambda: flychess.Player("backprop+judge", brain=brain)),
        ("choose", lambda: flychess.Player("backprop+search64", brain=brain).choose(FENS[2])),
    ]:
        during, took = beside(call)
        print(f"{what}: {took:.3f} s, another thread counted {during} times meanwhile")
        assert during > 1000, f"{what} held the GIL: {during} counts in {took:.3f} s"


def test_bad_input_raises_exceptions_that_name_it(brain, tmp_path):
    long_bad = "this is no fen " * 20
    with pytest.raises(ValueError) as e:
        brain.think([START, long_bad])
    assert "this is no fen" in str(e.value) and len(str(e.value)) < 200, "quotes at most 80 characters"
    with pytest.raises(ValueError):
        brain.think([START], steps=13)
    with pytest.raises(ValueError):
        brain.think([START], neurons=[len(brain)])
    with pytest.raises(KeyError) as e:
        flychess.Fly.load("nobody-at-all", brain=brain)
    assert "backprop" in str(e.value), "lists the known flies"
    with pytest.raises(KeyError) as e:
        flychess.Player("nobody-at-all", brain=brain)
    assert "no player named" in str(e.value)
    with pytest.raises(FileNotFoundError):
        flychess.Brain.load("standin", data=str(tmp_path / "no such folder"))
    with pytest.raises(KeyError):
        flychess.Brain.load("no-such-brain", data=str(tmp_path))
    with pytest.raises(ValueError):
        brain.think([START], engine="abacus")


def test_a_panic_inside_is_a_runtime_error_not_a_crash():
    with pytest.raises(RuntimeError) as e:
        flychess._native._panic_for_test()
    assert "on purpose" in str(e.value)
