#!/usr/bin/env bash
# `bash benchmarks/h200_explore.sh TARGET...` with OUT set (the device tool sets it): issue 12's H200 targets
# explored in the space the rules generate (no hand-written families), each timed against its reference in the
# same run by benchmarks/explore_suite.py.  Targets as there, e.g. total:n=268435456 mm:m=4096,n=4096,k=4096.
# BUDGET (seconds per target, default 180).  Needs the wheels in .whl/ (see benchmarks/h200.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
source benchmarks/h200_env.sh
git log -1 --oneline 2>/dev/null; nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader || true
for target in "$@"; do
  echo "== $target (budget ${BUDGET:-180} s)"
  timeout $(( ${BUDGET:-180} + 200 )) python3 benchmarks/explore_suite.py "$target" --budget "${BUDGET:-180}" \
    --out "${OUT:-/tmp/out}" 2>&1 | grep -v "^  [a-z_].*@" | tail -30
done
