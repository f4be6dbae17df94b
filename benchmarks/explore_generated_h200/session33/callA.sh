# Session 33, call A: split-k of the matrix product's nest with register-blocked tiles per chunk
# (benchmarks/split_k_gpu.py, SGEMM 8192x64x8192 against cuBLAS), then session 32's double buffering
# with every staged copy asynchronous on four SGEMM tiles (cuBLAS in the same run).
source benchmarks/h200_env.sh
mkdir -p $OUT/callA
timeout 300 python3 benchmarks/split_k_gpu.py --sizes 8192x64x8192 2>&1 | tee $OUT/callA/split_k.txt
timeout 240 python3 benchmarks/double_buffer_gpu.py --sizes 4096x4096x4096 --which sgemm \
  --tiles 128x128x8x8x8,128x128x16x8x8,128x64x16x8x8,64x64x16x4x4 2>&1 | tee $OUT/callA/double_buffer.txt
