# Session 34: hardware counters of every miss of issue 13's table (benchmarks/kernel_counters.py: our PTX
# transplanted to CUDA under ncu, cuBLAS beside the products), from the table's run of this session.
source benchmarks/h200_env.sh
mkdir -p $OUT/counters
which ncu; ncu --version | tail -1
python3 -c "import cupy; print('cupy', cupy.__version__)"
timeout 570 python3 benchmarks/kernel_counters.py --from-json benchmarks/explore_generated_h200/issue13/h100_2026-12-07.json \
  --out $OUT/counters "$@" 2>&1 | grep -v "CompilerWarning\|lambda: self._prg\|warnings.warn"
