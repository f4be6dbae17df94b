# Session 37, call A: the whole table (benchmarks/issue13.sh) after this session's printer change (a work-group per
# element on dimension 0, no loop over groups), with session 36's untimed points (128x128 k16 8x8 unrolled;
# 1024x1024x64's 64x64 k16 8x2 unrolled); then, in the time left, the counters of a 16 x 8 register-blocked point
# (why the wider block is slower; WIDE_LABEL names another point).  Run twice: first at 6d1e4b2's successors
# without the GPU's private limit (the 16 x 8 accumulators a global temporary), then (call C) with it and with
# loops over groups on GPUs, profiling WIDE_LABEL="register-blocked 256x128 k8 16x8, k-steps unrolled, double-buffered".
start=$SECONDS
bash benchmarks/issue13.sh
source benchmarks/h200_env.sh
left=$((470 - (SECONDS - start)))
echo "seconds left for the counters: $left"
if [ "$left" -gt 90 ]; then
  mkdir -p $OUT/wide
  timeout $left python3 -u benchmarks/kernel_counters.py --only mm:m=4096,n=4096,k=4096 \
    --label "${WIDE_LABEL:-register-blocked 256x128 k8 16x8 (the preset's skeleton, cuBLAS's outputs per thread)}" \
    --out $OUT/wide --deadline 60 --timeout 70 2>&1 | grep --line-buffered -v "CompilerWarning\|lambda: self._prg\|warnings.warn"
  rm -f $OUT/wide/*/*.npz $OUT/wide/*/*.ptx
fi
