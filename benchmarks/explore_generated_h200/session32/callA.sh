# Session 32, call A: the TF32 ceilings in OpenCL (mma.sync from registers, local memory, wgmma) and
# hand-written cp.async pipelines; double buffering (rule double_buffer) on the SGEMM preset and the
# staged TF32 program; the derived TF32 default; cuBLAS in the same run.
source benchmarks/h200_env.sh
mkdir -p $OUT/callA
python3 benchmarks/tf32_async.py --sizes 4096x4096x4096 2>&1 | tee $OUT/callA/tf32_async.txt
python3 benchmarks/double_buffer_gpu.py --sizes 4096x4096x4096,8192x64x8192 2>&1 | tee $OUT/callA/double_buffer.txt
python3 benchmarks/tf32_gemm_gpu.py --sizes 4096x4096x4096 --shapes "" --derived "" --hand "" --default 2>&1 | tee $OUT/callA/default.txt
python3 benchmarks/tf32_async.py --sizes 8192x8192x8192 --no-probes --variants v128x128k16w4s3,v128x256k16w8s2,s128x256k8w8s3 2>&1 | tee $OUT/callA/tf32_async_8192.txt
