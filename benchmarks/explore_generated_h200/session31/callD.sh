#!/usr/bin/env bash
# Session 31, device call D (repository root, .whl carried): sizes whose lengths lack the divisors the splits
# need, explored with stage 1's cuts (map_cut, reduce_cut: a multiple of a power of two split further, the
# remainder on its own), each against torch.compile and the device copy in the same run; then, on an H200 only,
# issue 12's sum of 2^28 floats (its 4.3 TB/s target is an H200 number).
source benchmarks/h200_env.sh
BUDGET=${BUDGET:-90} bash benchmarks/h200_explore.sh black_scholes:n=16777215 jacobi2d_5:h=8191,w=8191 \
  hotspot2d:h=8191,w=8191
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  BUDGET=60 bash benchmarks/h200_explore.sh total:n=268435456
fi
