# Session 32, call B: double buffering with every staged copy asynchronous (A's transposed tile as 4-byte
# cp.async; padded copies as zero-filling cp.async) on the SGEMM preset's tiles and others and the staged TF32
# program; the TF32 helper rounding by half an ulp added (checked bit for bit against cvt.rna), the derived
# TF32 default with it; cuBLAS in the same run.
source benchmarks/h200_env.sh
mkdir -p $OUT/callB
python3 benchmarks/double_buffer_gpu.py --sizes 4096x4096x4096 --which sgemm,tf32 \
  --tiles 128x128x8x8x8,128x128x16x8x8,128x64x16x8x8,64x64x16x4x4 2>&1 | tee $OUT/callB/double_buffer.txt
python3 benchmarks/tf32_async.py --sizes 4096x4096x4096 --variants v128x128k16w4s3 2>&1 | tee $OUT/callB/tf32_async.txt
python3 benchmarks/tf32_gemm_gpu.py --sizes 4096x4096x4096,8192x8192x8192 --shapes "" --derived "" --hand "" --default 2>&1 | tee $OUT/callB/default.txt
