#!/usr/bin/env python3
"""Capacity check (issue 56): can a linear readout over the descending neurons avoid stalemating
moves in won positions, with SPEC §4's from + to (+ promotion) score, or with a term per (from, to)
pair added? Both fitted on the same stalemate traps only (a fifth held out), full batch, 300 Adam
steps at 3e-3, taught Stockfish's move; scored on the trained positions (capacity) and on the
held-out ones (generalisation). Needs numpy and python-chess.

    python3 tools/stalemate_traps.py labels.jsonl traps.jsonl      # then `flychess data import` it
    flychess cache --dataset DATA/traps.flyd                        # the traps' DN rates
    python3 tools/pair_capacity.py traps.jsonl DATA/cache/FILE.dn 6144 4096

FILE.dn is the cache whose JSON sidecar names the traps' dataset; 6144 is its first TRAIN row
(HOLD 4,096 + VAL 2,048), 4096 the traps. The cache holds 2 × 1,247 bytes a position (the mean of
steps 9–12, then step 12, rate × 255); the mean is read."""
import json, sys, time
import numpy as np
import chess

labels, cache, first_train, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
D = 1247
rows = [json.loads(l) for l in open(labels)][first_train:first_train + n]
raw = np.fromfile(cache, dtype=np.uint8).reshape(-1, 2 * D)[first_train:first_train + n, :D]
X = raw.astype(np.float32) / 255.0

pos_idx, fr, to, promo, stale, target, pair_key = [], [], [], [], [], [], []
for i, r in enumerate(rows):
    b = chess.Board(r["fen"])
    best = r["moves"][0]["uci"]
    for m in b.legal_moves:
        f, t = m.from_square, m.to_square
        if b.turn == chess.BLACK:
            f, t = f ^ 56, t ^ 56
        b.push(m)
        s = b.is_stalemate()
        b.pop()
        pos_idx.append(i); fr.append(f); to.append(t); promo.append(0 if m.promotion is None else 1 + [5, 4, 3, 2].index(m.promotion))
        stale.append(s); target.append(m.uci() == best); pair_key.append(f * 64 + t)
pos_idx, fr, to, promo = map(np.array, (pos_idx, fr, to, promo))
stale, target = np.array(stale), np.array(target, dtype=np.float32)
keys, pair = np.unique(np.array(pair_key), return_inverse=True)
P = len(keys)
starts = np.flatnonzero(np.r_[True, pos_idx[1:] != pos_idx[:-1]])
rng = np.random.default_rng(1)
held = rng.random(n) < 0.2  # a fifth of the positions held out
print(f"{n} positions, {len(pos_idx)} moves, {stale.sum()} stalemating, {P} (from, to) pairs; {held.sum()} held out", flush=True)

def run(with_pair, steps=300, lr=3e-3):
    shapes = {"f": (64, D), "t": (64, D), "q": (5, D), "bf": (64,), "bt": (64,), "bq": (5,)}
    if with_pair:
        shapes.update({"p": (P, D), "bp": (P,)})
    W = {k: np.zeros(s, np.float32) for k, s in shapes.items()}
    M = {k: np.zeros_like(v) for k, v in W.items()}
    V = {k: np.zeros_like(v) for k, v in W.items()}
    tr = ~held[pos_idx]
    ntr = (~held).sum()
    for step in range(1, steps + 1):
        Sf, St, Sq = X @ W["f"].T + W["bf"], X @ W["t"].T + W["bt"], X @ W["q"].T + W["bq"]
        s = Sf[pos_idx, fr] + St[pos_idx, to] + Sq[pos_idx, promo]
        if with_pair:
            Sp = X @ W["p"].T + W["bp"]
            s = s + Sp[pos_idx, pair]
        mx = np.maximum.reduceat(s, starts)[np.searchsorted(starts, np.arange(len(s)), side="right") - 1]
        e = np.exp(s - mx)
        z = np.add.reduceat(e, starts)[np.searchsorted(starts, np.arange(len(s)), side="right") - 1]
        prob = e / z
        g = np.where(tr, prob - target, 0.0).astype(np.float32) / ntr
        grads = {}
        for name, col in (("f", fr), ("t", to), ("q", promo)):
            dS = np.zeros((n, shapes[name][0]), np.float32)
            np.add.at(dS, (pos_idx, col), g)
            grads[name], grads["b" + name] = dS.T @ X, dS.sum(0)
        if with_pair:
            dS = np.zeros((n, P), np.float32)
            np.add.at(dS, (pos_idx, pair), g)
            grads["p"], grads["bp"] = dS.T @ X, dS.sum(0)
        for k in W:
            M[k] = 0.9 * M[k] + 0.1 * grads[k]
            V[k] = 0.999 * V[k] + 0.001 * grads[k] ** 2
            W[k] -= lr * (M[k] / (1 - 0.9 ** step)) / (np.sqrt(V[k] / (1 - 0.999 ** step)) + 1e-8)
    # The favourite of each position.
    fav = np.zeros(n, dtype=int)
    for k, a in enumerate(starts):
        b = starts[k + 1] if k + 1 < len(starts) else len(s)
        fav[pos_idx[a]] = a + int(np.argmax(s[a:b]))
    out = {}
    for name, mask in (("trained", ~held), ("held out", held)):
        st = stale[fav[mask]]
        best = target[fav[mask]] > 0
        p = st.mean()
        half = 1.96 * np.sqrt(p * (1 - p) / mask.sum())
        out[name] = f"stalemates {100*p:.1f} % [{100*(p-half):.1f}, {100*(p+half):.1f}] of {mask.sum()}, Stockfish's move {100*best.mean():.1f} %"
    return out

for with_pair in (False, True):
    t0 = time.time()
    r = run(with_pair)
    print(("from + to + promotion (SPEC §4)" if not with_pair else "plus a term per (from, to) pair"), r, f"{time.time()-t0:.0f} s", flush=True)
