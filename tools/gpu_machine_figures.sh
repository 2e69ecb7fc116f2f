#!/usr/bin/env bash
# The GPU figures of issue 23, as one prepared run on a lent GPU machine (an H200 here): the
# simulator bench on the default brain (CPU and GPU rows, the GPU checked against the CPU engine,
# where a think's time goes, the slab sweep), the brain view's frame time, a DN cache of 50,000
# positions on the GPU engine with its positions/s, and a readout fitted on it with burn's wgpu
# backend. Everything it prints and writes lands in $OUT.
#
# It runs a release binary built on a developer machine (Debian 12, x86-64) and carried along as
# .gl/flychess.gz, with the Vulkan loader and ALSA from Debian packages in .gl/ (the machine has
# the NVIDIA driver but nothing to fetch packages from):
#
#   cargo build --release && gzip -c target/release/flychess > .gl/flychess.gz
#   (cd .gl && apt-get download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 libasound2)
#
# Usage there: [SKIP_TRAIN=1] tools/gpu_machine_figures.sh [BATCHES] [CACHE_POSITIONS]
set -uo pipefail
batches=${1:-1,32,256,1024,4096}
cache_positions=${2:-50000}
out=${OUT:-/tmp/flychess-figures}
mkdir -p "$out"
data=/tmp/flychess-data
started=$(date +%s)
step() { echo "== $(( $(date +%s) - started )) s: $*" | tee -a "$out/steps.log"; }

step "system libraries"
for f in .gl/libvulkan1_*.deb .gl/libegl1_*.deb .gl/libglvnd0_*.deb .gl/libopengl0_*.deb .gl/libgl1_*.deb .gl/libglx0_*.deb .gl/libgles2_*.deb; do
  dpkg -x "$f" /
done
ldconfig
# ALSA (which the binary links for move sounds) goes beside, not over, the machine's own.
mkdir -p /tmp/alsa && dpkg -x .gl/libasound2_*.deb /tmp/alsa
export LD_LIBRARY_PATH=/tmp/alsa/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
if [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && [ -z "${VK_DRIVER_FILES:-}" ]; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
gunzip -c .gl/flychess.gz > /tmp/flychess && chmod +x /tmp/flychess
bin=/tmp/flychess
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv > "$out/gpu.txt" 2>&1
nproc >> "$out/gpu.txt"

step "the default brain (generated, built and calibrated on first use)"
$bin --data $data brain info --json > "$out/brain.json" 2> "$out/brain.log" || tail -5 "$out/brain.log"

step "bench --batches $batches"
timeout 300 $bin --data $data bench --json --batches "$batches" > "$out/bench.json" 2> "$out/bench.log"
echo "bench exit $?"; tail -3 "$out/bench.log"

step "bench --render"
timeout 60 $bin --data $data bench --render --json > "$out/render.json" 2> "$out/render.log"
echo "render exit $?"; cat "$out/render.json" | head -20

step "cache of $cache_positions positions on the GPU engine"
timeout 180 $bin --data $data cache --positions "$cache_positions" --engine gpu > "$out/cache.txt" 2>&1
echo "cache exit $?"; tail -3 "$out/cache.txt"

step "the dopamine fly on the GPU engine beside the CPU model (issue 41)"
timeout 240 $bin --data $data bio speed --engine gpu --json > "$out/bio-speed.json" 2> "$out/bio-speed.log"
echo "bio speed exit $?"; head -40 "$out/bio-speed.json"

if [ "${SKIP_TRAIN:-0}" = 1 ]; then step "done (training skipped)"; exit 0; fi
step "train --fit-on gpu on that cache"
timeout 200 $bin --data $data train --name h200 --positions "$cache_positions" --fit-on gpu --engine gpu > "$out/train.txt" 2>&1
echo "train exit $?"; tail -5 "$out/train.txt"
step "done"
