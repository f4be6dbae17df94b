#!/usr/bin/env bash
# `bash benchmarks/warp_h200.sh` with OUT set (the device tool sets it), on an NVIDIA GPU: the
# sum of 2^28 floats as the GPU preset's two trees (local memory to the end) and as their twin
# whose trees end in the first warp's registers (warp_tree: shuffles), same slot values, each
# checked against float64 NumPy and timed by profiling events in one run (time_points.py); then
# the sum and the reductions of the suite explored in a space that now holds both; then a batched
# matrix product with the mm preset inside its batch map against torch.bmm (batched_mm.py).
set -uo pipefail
cd "$(dirname "$0")/.."
source benchmarks/h200_env.sh
git log -1 --oneline 2>/dev/null; nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader || true
python3 -c "from codegen_opencl.runtime import choose_device, device_intrinsics as d; print('intrinsics:', sorted(d(choose_device())))"
TREES="reduce_tree(block=s0, local=s1)@root; lower_map_workgroup(d=0)@1; lower_map_local(d=0)@1.0.1.0.1.0.1.0.0; lower_map_local(d=0)@1.0.1.0.1.1; reduce_tree_stage(block=s2, local=s3)@root"
WARPS="$TREES; warp_tree()@1.1.1.1.0.1.0.1; warp_tree()@1.0.1.0.1"
A="s0=65536 s1=1024,256,64 s2=256 s3=32"; B="s0=16384,4096 s1=256 s2=1024 s3=256"
timeout 240 python3 benchmarks/time_points.py total:n=268435456 --point "$TREES" $A --point "$WARPS" $A \
  --point "$TREES" $B --point "$WARPS" $B
timeout 150 python3 benchmarks/batched_mm.py --sizes 16,1024,1024,1024 64,256,256,256
for t in "total:n=268435456 ${BUDGET_SUM:-50}" "dot:n=67108864 ${BUDGET:-20}" "asum:n=67108864 ${BUDGET:-20}" "scal:n=67108864 ${BUDGET:-20}"; do
  set -- $t
  echo "== $1 (budget $2 s)"
  timeout $(( $2 + 120 )) python3 benchmarks/explore_suite.py "$1" --budget "$2" --out "${OUT:-/tmp/out}/warp" 2>&1 \
    | grep -v "^  [a-z_].*@" | tail -14
done
