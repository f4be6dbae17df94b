# Session 36, call A: after the first full table on an H100 (the unrolled 128x128 k8 8x8 point fastest, the
# 16 x 8 register blocks 1.7x slower): the counters of a 16 x 8 point and of the unrolled point, then the SGEMM
# rows again with this session's points (128x128 k16 unrolled; 1024x1024x64's 64x64 k16 8x2 unrolled).
source benchmarks/h200_env.sh
mkdir -p $OUT/wide $OUT/unrolled
for pair in "wide|register-blocked 256x128 k8 16x8 (the preset's skeleton, cuBLAS's outputs per thread)" \
            "unrolled|register-blocked 128x128 k8 8x8, k-steps unrolled (the preset's skeleton)"; do
  dir=${pair%%|*}; label=${pair#*|}
  timeout 170 python3 -u benchmarks/kernel_counters.py --only mm:m=4096,n=4096,k=4096 --label "$label" \
    --out $OUT/$dir --deadline 60 --timeout 70 2>&1 | grep --line-buffered -v "CompilerWarning\|lambda: self._prg\|warnings.warn"
  rm -f $OUT/$dir/*/*.npz $OUT/$dir/*/*.ptx
done
timeout 230 python3 benchmarks/issue13.py --only mm:m=4096 mm:m=8192,n=8192 mm:m=1024 --json $OUT/mm.json --no-write 2>&1 \
  | grep --line-buffered -v "CompilerWarning\|lambda: self._prg\|warnings.warn" | grep --line-buffered "^| SGEMM\|total wall\|Error"
