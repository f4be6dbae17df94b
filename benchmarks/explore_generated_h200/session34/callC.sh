# Session 34, call C: K-Means' row again after zip_map_fst fused its distances (no global temporary), then
# the hardware counters of every miss of the table (benchmarks/kernel_counters.py).
source benchmarks/h200_env.sh
mkdir -p $OUT/counters
which ncu; ncu --version | tail -1
python3 -c "import cupy; print('cupy', cupy.__version__)"
timeout 100 python3 benchmarks/issue13.py --only kmeans --json $OUT/kmeans.json --no-write 2>&1 \
  | grep -v "CompilerWarning\|lambda: self._prg\|warnings.warn" | grep "kmeans\|candidate\|dpia.compile"
timeout 450 python3 benchmarks/kernel_counters.py --from-json benchmarks/explore_generated_h200/issue13/h100_2026-12-07.json \
  --out $OUT/counters --deadline 330 "$@" 2>&1 | grep -v "CompilerWarning\|lambda: self._prg\|warnings.warn"
