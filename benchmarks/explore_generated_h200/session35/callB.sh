# Session 35, call B: Black-Scholes' row after imperative.sign_symmetry (erfc of d and -d from one call:
# two erfc calls per option where there were four), then the counters of its kernel and of SGEMM 4096^3
# again with the issue-slot and pipe metrics the summary now keeps.
source benchmarks/h200_env.sh
mkdir -p $OUT/counters
timeout ${ROW_S:-50} python3 benchmarks/issue13.py --only black --json $OUT/black.json --no-write 2>&1 \
  | grep --line-buffered -v "CompilerWarning\|lambda: self._prg\|warnings.warn" | grep --line-buffered "black\|candidate\|dpia.compile"
timeout ${CALL_S:-60} python3 -u benchmarks/kernel_counters.py --from-json benchmarks/explore_generated_h200/issue13/h100_2026-12-07.json \
  --out $OUT/counters --deadline ${DEADLINE_S:-25} --timeout ${STEP_S:-40} "$@" 2>&1 | grep --line-buffered -v "CompilerWarning\|lambda: self._prg\|warnings.warn"
rm -f $OUT/counters/*/*.npz $OUT/counters/*/*.out $OUT/counters/*/kernel.cuda.ptx
