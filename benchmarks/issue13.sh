#!/usr/bin/env bash
# Issue 13's table in one device call on an NVIDIA GPU: every target against its reference in the same run
# (benchmarks/issue13.py), at most about 9 minutes with its compiles:
#   bash benchmarks/issue13.sh [issue13.py options, e.g. --only mm: --budget 20]      (carry .whl: benchmarks/h200.sh)
# The device's copy of the tree does not come back, so the rows go to $OUT/issue13.json (rewritten after each row)
# and the table into $OUT/RESULTS.md, a copy of benchmarks/RESULTS.md; back here, put the table into the file with
#   python benchmarks/issue13.py --from-json <files_at>/issue13.json
set -uo pipefail
cd "$(dirname "$0")/.."
source benchmarks/h200_env.sh
OUT="${OUT:-/tmp/out}"
mkdir -p "$OUT" && cp benchmarks/RESULTS.md "$OUT/RESULTS.md"
git log -1 --oneline 2>/dev/null; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader || true
timeout 560 python3 benchmarks/issue13.py --json "$OUT/issue13.json" --write "$OUT/RESULTS.md" "$@" 2>&1 \
  | grep -v "CompilerWarning\|lambda: self._prg\|warnings.warn"
