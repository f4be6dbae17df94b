#!/usr/bin/env bash
# Session 30, device call A (repository root, .whl carried): issue 12's last H200 numbers (Jacobi 2D 8192^2 with
# the neighbourhood tiles, the sum of 2^28 floats, each explored 90 s against its references in the same run),
# then this session's remainder tiles at sizes no tile divides (the GPU target's default: tiles on t * (n // t)
# rows or planes plus the remainder's kernel; the CPU target's row is the untiled kernel these sizes had before).
BUDGET=90 bash benchmarks/h200_explore.sh jacobi2d_5:h=8192,w=8192 total:n=268435456
source benchmarks/h200_env.sh
echo "== remainder tiles (odd sizes)"
timeout 200 python3 benchmarks/lockstep_gpu.py jacobi2d_5:h=8191,w=8191 hotspot2d:h=8191,w=8191 \
  conv2d_5x5:h=8191,w=8190 jacobi3d_7:d=511,h=512,w=512 jacobi2d_5:h=8192,w=8192 --repeat 20
