#!/usr/bin/env bash
# Session 30, device call B (repository root; .whl and baseline_tree/ = `git archive f894e01` carried): the
# driver's launch with dimension 0 rounded up to a multiple of 256 on GPUs (call A found prime sizes at 10-40 ms:
# groups of one item), at sizes no tile or group divides, then session 29's call 1 (TF32 default lowering,
# constant local strides against f894e01).
source benchmarks/h200_env.sh
echo "== odd sizes, dimension 0 rounded for the driver"
timeout 200 python3 benchmarks/lockstep_gpu.py jacobi2d_5:h=8191,w=8191 hotspot2d:h=8191,w=8191 \
  conv2d_5x5:h=8191,w=8190 black_scholes:n=16777215 jacobi2d_5:h=8192,w=8192 --repeat 20
bash benchmarks/explore_generated_h200/session29/call1.sh
