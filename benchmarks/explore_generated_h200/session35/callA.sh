# Session 35, call A: the hardware counters of every miss of issue 13's table (benchmarks/kernel_counters.py).
# Session 34's call C and this session's first try hung once CUDA ran in the process holding NVIDIA's
# OpenCL; now CUDA runs only in processes of its own (the transplant check, the one under ncu), each
# killed with its children past --timeout, and every step prints as it ends.
source benchmarks/h200_env.sh
mkdir -p $OUT/counters
timeout 60 python3 -c "import time; t = time.time(); import cupy as cp; print('cupy', cp.__version__, int(cp.arange(10).sum()), round(time.time() - t, 1), 's')"
timeout ${CALL_S:-560} python3 -u benchmarks/kernel_counters.py --from-json benchmarks/explore_generated_h200/issue13/h100_2026-12-07.json \
  --out $OUT/counters --deadline ${DEADLINE_S:-420} --timeout ${STEP_S:-110} "$@" 2>&1 | grep --line-buffered -v "CompilerWarning\|lambda: self._prg\|warnings.warn"
cat $OUT/counters/*/transplant.out 2>/dev/null | tail -20
rm -f $OUT/counters/*/*.npz
