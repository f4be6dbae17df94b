#!/usr/bin/env bash
# `bash benchmarks/warp_gemv_h200.sh` with OUT set, on an NVIDIA GPU: GEMV 16384^2 with a row per
# work-group reduced by trees (reduce_tree over each row's blocks), in local memory to the end and
# as the warp_tree twin (the trees' last steps by shuffles), same slot values, in one run
# (time_points.py: each checked against float64 NumPy, references in the same run).
set -uo pipefail
cd "$(dirname "$0")/.."
source benchmarks/h200_env.sh
nvidia-smi --query-gpu=name --format=csv,noheader || true
TREE="reduce_tree(block=s0, local=s1)@0.1.0.0.1.1; lower_map_workgroup(d=0)@root; lower_map_seq()@0.1.0.0.1.1.1; lower_map_local(d=0)@0.1.0.0.1.1.1.0.1.0.1.0.1.0.0; lower_map_local(d=0)@0.1.0.0.1.1.1.0.1.0.1.1; lower_map_seq_unroll()@0.1.0.0.1.1.1.0.1.0.1.1.0.1.0.1"
WARP="$TREE; warp_tree()@0.1.0.0.1.1.1.0.1.0.1"
V="s0=16384,64 s1=256,64"
timeout 330 python3 benchmarks/time_points.py gemv:m=16384,n=16384 --point "$TREE" $V --point "$WARP" $V 2>&1 \
  | grep -v "CompilerWarning\|_prg.build\|warnings generated"
