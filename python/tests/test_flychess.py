"""The Python package against the program itself (issue 57): the same rates bit for bit as
`flychess brain think`, the same policy as `flychess analyse --json`, shapes and dtypes, the
exceptions that name their input, no panic across the boundary, and the speed of a 64-position
think from Python beside the same think in Rust (printed, and at least 0.9 of it).

The stand-in brain keeps it quick; FLYCHESS_BIN is the program (.ci/run sets it) and the data
folder a fresh temporary one."""

import json
import os
import subprocess
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


def test_a_think_from_python_runs_as_fast_as_the_same_think_in_rust(brain):
    fens = [FENS[i % len(FENS)] for i in range(64)]
    brain.think(fens[:2])  # warm the caches both sides share
    python, rust = [], []
    for _ in range(5):
        started = time.perf_counter()
        brain.think(fens)
        python.append(time.perf_counter() - started)
        rust.append(brain._think_seconds_in_rust(fens))
    ratio = min(rust) / min(python)
    print(f"64-position think: Python {64 / min(python):.1f} positions/s, Rust {64 / min(rust):.1f} positions/s, ratio {ratio:.3f}")
    assert ratio >= 0.9, ratio
