#!/usr/bin/env bash
# Issue 15's figures: the single-process explorer and Ray at 1, 2 and 4 preparation workers,
# alternating, each with the same budget, program (sum of 2^22 floats on PoCL), search and seed.
# Usage: bash benchmarks/cluster_explore.sh OUT.jsonl [BUDGET_S]
set -euo pipefail
out=${1:?usage: cluster_explore.sh OUT.jsonl [BUDGET_S]}
budget=${2:-90}
cd "$(dirname "$0")/.."
for workers in 1 2 4; do
  for backend in local ray; do
    python benchmarks/cluster_explore.py --backend "$backend" --workers "$workers" --budget "$budget" --out "$out"
  done
done
