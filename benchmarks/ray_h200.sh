#!/usr/bin/env bash
# Issue 16 on the one-GPU host the device tool lends: the single-process explorer (worker processes on the host)
# against Ray (a local cluster: WORKERS preparation workers on the host's CPU cores, one measuring actor for the
# H200), at equal budgets, the same program, sizes, search and seed, alternating.
#   OUT=dir BUDGET=45 WORKERS=8 bash benchmarks/ray_h200.sh TARGET...   (carry .whl and .whl_ray)
# Targets as benchmarks/explore_suite.py takes them (mm:m=4096,n=4096,k=4096 jacobi2d_5:h=8192,w=8192 ...).
# Writes $OUT/ray_h200.jsonl (benchmarks/cluster_explore.py's rows) and prints its table.
# The 4-GPU figures of issue 16 need a host with 4 GPUs; .whl_ray: `bash benchmarks/ray_wheel.sh 3.12`.
set -uo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
  .whl/*.whl .whl_ray/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PATH=/tmp/site/bin:$PATH
mkdir -p /tmp/icd && echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd DPIA_DEVICE=nvidia PYTHONUNBUFFERED=1
out=${OUT:-/tmp/out}/ray_h200.jsonl
mkdir -p "$(dirname "$out")"
git log -1 --oneline 2>/dev/null; nproc; nvidia-smi --query-gpu=name --format=csv,noheader || true
for target in "$@"; do
  for backend in local ray; do
    echo "== $target $backend (budget ${BUDGET:-45} s, ${WORKERS:-8} workers)"
    timeout $(( ${BUDGET:-45} + 150 )) python3 benchmarks/cluster_explore.py --target "$target" --backend "$backend" \
      --workers "${WORKERS:-8}" --budget "${BUDGET:-45}" --out "$out" 2>&1 | tail -3 | cut -c1-400
  done
done
python3 benchmarks/cluster_explore.py --table "$out"
