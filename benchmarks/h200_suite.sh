#!/usr/bin/env bash
# Issue 13's suite table on the H200: the suite's programs at the Lift papers' large sizes, each explored for BUDGET
# seconds from its high-level form and timed against, in the same run, torch.compile of its float32 NumPy function
# (benchmarks/torch_compiled.py), the device-to-device copy of its bytes and cuBLAS where one exists:
#   OUT=dir BUDGET=30 bash benchmarks/h200_suite.sh [K/N]     (K/N: every N-th target from the K-th)
# Writes $OUT/suite_h200.md (the table) and $OUT/all.json.  Needs the CPython 3.12 wheels in .whl/ (benchmarks/h200.sh).
# N-Body runs at 16384 bodies, not Lift's 131072: its NumPy function and float64 oracle hold an n x n x 3 array
# (206 GB at 131072), on the host and, for torch.compile, on the GPU.
set -uo pipefail
cd "$(dirname "$0")/.."
source benchmarks/h200_env.sh
git log -1 --oneline 2>/dev/null; nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader || true
targets=(jacobi2d_5:h=8192,w=8192 hotspot2d:h=8192,w=8192 gemv:m=16384,n=16384 black_scholes:n=16777216
         nn:n=33554432 kmeans:n=819200,k=5,f=34 md:n=81920,m=128 jacobi3d_7:d=512,h=512,w=512
         conv2d_5x5:h=8192,w=8192 gemv_t:m=16384,n=16384 mri_q:k=2048,n=262144 nbody:n=16384)
python3 benchmarks/explore_suite.py "${targets[@]}" --part "${1:-1/1}" --budget "${BUDGET:-30}" --out "${OUT:-/tmp/out}" \
  --table "${OUT:-/tmp/out}/suite_h200.md" --one-json 2>&1 | grep -v "^  [a-z_].*@\|CompilerWarning\|lambda: self._prg"
