#!/usr/bin/env bash
# Issue 68: Stockfish's whole opinion (every legal move's score) for the TRAIN rows of
# games-1200k, labelled in the background across sessions. Each session's machine starts empty,
# so the labels live in the repository in pieces (sim/brain/data/engine-labels/games-1200k-every-dD/):
# this script rebuilds the labels file from those pieces, goes on labelling niced (resuming after
# the last whole line), and `pieces` cuts what was labelled since into a new piece to commit.
#
# Usage:
#   tools/every_move_labels.sh run DEPTH ROWS [DATA]    # label (foreground; run it under nohup)
#   tools/every_move_labels.sh pieces DEPTH [DATA]      # a new piece of the lines since the last
#                                                       # (at most PIECE_LINES, default 300,000)
#   tools/every_move_labels.sh rates DEPTHS N [DATA]    # labels a second at each depth, one engine
#                                                       # (e.g. `rates 4,6,8 200`), measured twice,
#                                                       # interleaved, on the same N rows
#
# DATA is the data folder (default $FLYCHESS_DATA, else ~/.local/share/flychess). The games
# dataset is made the way the one-line labels' was (`data games --out games-1200k --positions
# 1200000`, seed 1), and the labels' sidecar checks its content hash.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:?run or pieces}
depth=${2:?depth (or depths for rates)}
bin=${FLYCHESS_BIN:-${CARGO_TARGET_DIR:-target}/release/flychess}
repo_dir="sim/brain/data/engine-labels/games-1200k-every-d$depth"
[ "$what" = rates ] || mkdir -p "$repo_dir"

# The lines the pieces hold, in order: their concatenation is the labels file's prefix.
pieces_end() {
  local last
  last=$(ls "$repo_dir"/labels-*.jsonl.zst 2>/dev/null | sort | tail -1)
  if [ -z "$last" ]; then echo 0; else basename "$last" .jsonl.zst | cut -d- -f3 | sed 's/^0*//;s/^$/0/'; fi
}

case "$what" in
  run)
    rows=${3:?rows}
    data=${4:-${FLYCHESS_DATA:-$HOME/.local/share/flychess}}
    out="$data/labels-every-d$depth"
    mkdir -p "$out"
    if [ ! -f "$data/datasets/games-1200k.flyd" ]; then
      nice -n 10 "$bin" --data "$data" data games --out games-1200k --positions 1200000
    fi
    # A new machine: the labels file from the pieces (only when it holds fewer lines than they do).
    have=$( [ -f "$out/labels.jsonl" ] && wc -l < "$out/labels.jsonl" || echo 0 )
    end=$(pieces_end)
    if [ "$have" -lt "$end" ]; then
      cp "$repo_dir/labels.json" "$out/labels.json"
      cat "$repo_dir"/labels-*.jsonl.zst | zstd -dc > "$out/labels.jsonl.tmp" && mv "$out/labels.jsonl.tmp" "$out/labels.jsonl"
      echo "rebuilt $end lines from $repo_dir"
    fi
    # `nice` alone ranks a process only inside its own session's group: where the kernel groups
    # processes by session (sched_autogroup), the whole group is niced too, so a build started
    # from another terminal still comes first.
    if [ -w /proc/self/autogroup ]; then echo 19 > /proc/self/autogroup || true; fi
    exec nice -n 19 "$bin" --data "$data" data label --dataset games-1200k --out "$out" --every-move --depth "$depth" \
      --positions "$rows" --workers "${WORKERS:-2}"
    ;;
  pieces)
    data=${3:-${FLYCHESS_DATA:-$HOME/.local/share/flychess}}
    out="$data/labels-every-d$depth"
    cp "$out/labels.json" "$repo_dir/labels.json"
    start=$(pieces_end)
    # Whole lines only (the job may be writing the last one).
    total=$(wc -l < "$out/labels.jsonl")
    # At most PIECE_LINES lines a piece (default 300,000: about 35 MB compressed at depth 4), so no
    # file in the repository nears a host's size limit; run `pieces` again for the next.
    cap=$((start + ${PIECE_LINES:-300000}))
    [ "$total" -gt "$cap" ] && total=$cap
    if [ "$total" -le "$start" ]; then echo "nothing new ($total lines, pieces end at $start)"; exit 0; fi
    piece=$(printf "%s/labels-%07d-%07d.jsonl.zst" "$repo_dir" "$start" "$total")
    tail -n +"$((start + 1))" "$out/labels.jsonl" | head -n "$((total - start))" | zstd -19 -q -o "$piece"
    echo "$piece: lines $start to $total ($(du -h "$piece" | cut -f1))"
    ;;
  rates)
    n=${3:?rows}
    data=${4:-${FLYCHESS_DATA:-$HOME/.local/share/flychess}}
    scratch=$(mktemp -d)
    trap 'rm -rf "$scratch"' EXIT
    # Each depth twice, interleaved (4 6 8 4 6 8), so a machine that slows down or speeds up in
    # between weighs on every depth alike; the same first N TRAIN rows each time.
    for round in 1 2; do
      for d in ${depth//,/ }; do
        start=$(date +%s.%N)
        "$bin" --data "$data" data label --dataset games-1200k --out "$scratch/d$d-$round" --every-move --depth "$d" \
          --positions "$n" --workers 1 > /dev/null 2>&1
        end=$(date +%s.%N)
        lines=$(wc -l < "$scratch/d$d-$round/labels.jsonl")
        echo "depth $d round $round: $lines positions in $(echo "$end - $start" | bc) s: $(echo "scale=1; $lines / ($end - $start)" | bc) positions/s (one engine)"
      done
    done
    ;;
  *) echo "run, pieces or rates" >&2; exit 2 ;;
esac
