#!/usr/bin/env bash
# Session 31, device call D (repository root, .whl carried): odd sizes against their power-of-two neighbours,
# each explored for 60 s in the space the rules generate, where the odd sizes' splits come from stage 1's cuts
# (map_cut, map_cut_columns, reduce_cut); torch.compile and the device copy timed in the same run
# (benchmarks/odd_sizes.py).  On an H200, issue 12's sum of 2^28 floats first (its 4.3 TB/s target is an H200
# number).
source benchmarks/h200_env.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  BUDGET=60 bash benchmarks/h200_explore.sh total:n=268435456
fi
timeout 420 python3 benchmarks/odd_sizes.py black_scholes:n=16777213/n=16777216 \
  jacobi2d_5:h=8191,w=8191/h=8192,w=8192 --budget 60 --out "${OUT:-/tmp/out}/odd_sizes" 2>&1 | \
  grep -v "^  [a-z_].*@" | grep -v "^\[" | tail -60
