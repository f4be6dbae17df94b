#!/usr/bin/env bash
# Run the GPU benchmarks on an NVIDIA machine without an OpenCL ICD file or pyopencl
# (the lent H200): `bash benchmarks/h200.sh sum`, `... mm`, `... stencil --grid 8192` or `... explore sum|mm [options]`.  Install the wheels carried in .whl/, point the ICD loader at NVIDIA's
# OpenCL library, then run.  See ../shared/reference/gpu.md.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q --upgrade --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD
mkdir -p /tmp/icd && echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd DPIA_DEVICE=nvidia PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv || true
case "${1:-sum}" in
  sum) shift || true; python3 benchmarks/sum_gpu.py "$@" ;;
  mm) shift; python3 benchmarks/mm_gpu.py "$@" ;;
  explore) shift; python3 benchmarks/explore_targets.py "$@" ;;
  suite) shift; python3 benchmarks/explore_suite.py "$@" ;;
  hand) shift; python3 benchmarks/sgemm_hand.py "$@" ;;
  stencil) shift; python3 benchmarks/stencil_pocl.py --device nvidia "$@" ;;
  *) echo "usage: bash benchmarks/h200.sh [sum|mm|explore|suite|hand|stencil] [options]" >&2; exit 2 ;;
esac
