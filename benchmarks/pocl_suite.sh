#!/usr/bin/env bash
# Every program of examples/suite.py explored on PoCL on an idle many-core host (the lent GPU host's CPU), each
# against NumPy in the same run: `OUT=dir BUDGET=30 bash benchmarks/pocl_suite.sh [SIZES [K/N]]` (SIZES: the suite's
# small, moderate or bench sizes; default bench; K/N: every N-th program from the K-th, a run split over calls).  Writes $OUT/suite.md (the table) and one JSON per program.
# Needs the CPython 3.12 wheels in .whl/ (see benchmarks/h200.sh) and pocl-binary-distribution's in .whl_pocl/.
set -uo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl .whl_pocl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
unset DPIA_DEVICE OCL_ICD_VENDORS
git log -1 --oneline 2>/dev/null; nproc
python3 benchmarks/explore_suite.py --suite "${1:-bench}" --part "${2:-1/1}" --budget "${BUDGET:-30}" --out "${OUT:-/tmp/out}" \
  --table "${OUT:-/tmp/out}/suite.md" --one-json 2>&1 | grep -v "^  [a-z_].*@\|CompilerWarning\|lambda: self._prg"
