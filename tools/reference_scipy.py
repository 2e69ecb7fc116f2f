#!/usr/bin/env python3
"""The 12-step rate model written the plain Python way (scipy.sparse CSR x dense), as the
reference `flychess bench --reference` compares the Rust engines with, on the same brain and
boards. Reads the raw arrays flychess wrote into DIR (manifest.json says their shapes), runs the
batch, prints JSON with the seconds per think, and writes the rates of every step to DIR/rates.f32.

  python3 tools/reference_scipy.py DIR [--repeats N]
"""
import json
import sys
import time

import numpy as np
import scipy.sparse as sp


def main():
    folder = sys.argv[1]
    repeats = int(sys.argv[sys.argv.index("--repeats") + 1]) if "--repeats" in sys.argv else 3
    m = json.load(open(f"{folder}/manifest.json"))
    n, batch, steps = m["neurons"], m["batch"], m["steps"]
    load = lambda name, dtype: np.fromfile(f"{folder}/{name}", dtype=dtype)
    row_start = load("row_start.u32", np.uint32).astype(np.int64)
    pre = load("pre.u32", np.uint32).astype(np.int64)
    weight = load("weight.f32", np.float32)
    x = load("x.f32", np.float32).reshape(n, batch)          # eye input per neuron (0 elsewhere)
    mu = load("mu.f32", np.float32).reshape(steps, n)
    gain = load("gain.f32", np.float32).reshape(steps, n)
    W = sp.csr_matrix((weight, pre, row_start), shape=(n, n))
    beta, leak = np.float32(m["beta"]), np.float32(m["leak"])

    def think():
        r = np.zeros((n, batch), dtype=np.float32)
        out = np.empty((steps, n, batch), dtype=np.float32)
        for t in range(steps):
            u = W @ r + x
            z = (u - mu[t][:, None]) * gain[t][:, None] + beta
            r = (1 - leak) * r + leak * np.maximum(np.tanh(z), 0)
            out[t] = r
        return out

    think()  # warm-up
    started = time.perf_counter()
    for _ in range(repeats):
        out = think()
    seconds = (time.perf_counter() - started) / repeats
    out.astype(np.float32).tofile(f"{folder}/rates.f32")
    print(json.dumps({"seconds_per_think": seconds, "batch": batch, "scipy": __import__("scipy").__version__, "numpy": np.__version__}))


if __name__ == "__main__":
    main()
