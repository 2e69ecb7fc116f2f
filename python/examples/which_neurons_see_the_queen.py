"""A worked example for a neuroscientist: which neurons of the fly's brain respond to the white
queen, and when?

It thinks two positions that differ only by the white queen (on d1, then taken off the board),
takes the difference of every neuron's rate at every one of the 12 steps, and
- prints which regions the board moves at each step (and plots them to a PNG),
- joins the rates to the neuron table's FlyWire cell types: the types that moved most,
- puts the descending neurons' rates (the readout's inputs) for the two positions side by side,
then writes the whole think to a Feather file other tools (pandas, R's arrow, navis) read.

Run it from a checkout after `pip install ./python`:

    python python/examples/which_neurons_see_the_queen.py [--brain standin] [--out F.feather] [--png F.png]

(the default FlyWire brain is built the first time, which takes a few minutes; `--brain standin`
runs in seconds on the synthetic stand-in.)
"""

import argparse

import numpy as np

import flychess

WITH_QUEEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
WITHOUT_QUEEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB1KBNR w KQkq - 0 1"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--brain", default="flywire783", help="flywire783 (default), standin, or a folder of FlyWire tables")
    parser.add_argument("--out", default="queen-think.feather", help="where to write the whole think (Feather, or .parquet)")
    parser.add_argument("--png", default="queen-regions.png", help="where to plot the regions' response, step by step")
    args = parser.parse_args()

    brain = flychess.Brain.load(args.brain)
    print(f"{brain.name}: {len(brain):,} neurons")
    rates = brain.think([WITH_QUEEN, WITHOUT_QUEEN])  # float32 [2 positions, 12 steps, neurons]
    moved = np.abs(rates[0] - rates[1])  # [12 steps, neurons]

    neurons = brain.neurons  # a pyarrow Table, one row per neuron, in the brain's order
    regions = np.asarray(neurons["region"].to_pylist())
    types = np.asarray(neurons["type"].to_pylist())

    print("\nMean |difference| per region, step by step (the queen's signal travelling inwards):")
    print(f"{'region':22}" + "".join(f"{t:>8}" for t in range(1, flychess.STEPS + 1)))
    for region in brain.regions:
        mask = regions == region
        if mask.any():
            print(f"{region:22}" + "".join(f"{moved[t, mask].mean():8.4f}" for t in range(flychess.STEPS)))

    last = moved[-1]
    print("\nThe ten cell types that moved most at step 12 (mean over their neurons):")
    typed = types != ""
    names, inverse = np.unique(types[typed], return_inverse=True)
    means = np.bincount(inverse, weights=last[typed]) / np.bincount(inverse)
    for k in np.argsort(means)[::-1][:10]:
        print(f"  {names[k]:20} {means[k]:.4f}")

    descending = np.flatnonzero(np.asarray(neurons["descending"]))
    print(f"\nDescending neurons (the readout's inputs), step 12, the ten that differ most, side by side:")
    print(f"  {'root id':>20} {'type':14} {'with queen':>11} {'without':>9}")
    root_ids = np.asarray(neurons["root_id"])
    for j in descending[np.argsort(last[descending])[::-1][:10]]:
        print(f"  {root_ids[j]:>20} {types[j] or '-':14} {rates[0, -1, j]:11.4f} {rates[1, -1, j]:9.4f}")
    print(f"  mean |difference| over all {len(descending)} descending neurons: {last[descending].mean():.4f}")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=120)
    steps = np.arange(1, flychess.STEPS + 1)
    for k, region in enumerate(brain.regions):
        mask = regions == region
        if mask.any():
            curve = [moved[t, mask].mean() for t in range(flychess.STEPS)]
            ax.plot(steps, curve, marker="o", ms=3, color=plt.cm.tab20(k % 20), label=region)
    ax.set_xlabel("step")
    ax.set_ylabel("mean |rate with queen − without|")
    ax.set_title(f"Where the white queen's absence travels ({brain.name})")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(args.png)
    print(f"\nthe regions' response plotted to {args.png}")
    path = flychess.export_think([WITH_QUEEN, WITHOUT_QUEEN], args.out, brain=brain)
    print(f"the whole think written to {path} (position, step, neuron, root_id, rate)")


if __name__ == "__main__":
    main()
