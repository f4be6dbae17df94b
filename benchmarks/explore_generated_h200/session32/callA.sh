# Session 32, call A: the TF32 ceilings in OpenCL (mma.sync from registers, local memory, wgmma) and
# hand-written cp.async pipelines, then the derived default, cuBLAS in the same run.
source benchmarks/h200_env.sh
mkdir -p $OUT/callA
python3 benchmarks/tf32_async.py --sizes 4096x4096x4096,8192x8192x8192 2>&1 | tee $OUT/callA/tf32_async.txt
python3 benchmarks/tf32_gemm_gpu.py --sizes 4096x4096x4096 --shapes "" --derived "" --hand "" --default 2>&1 | tee $OUT/callA/default.txt
