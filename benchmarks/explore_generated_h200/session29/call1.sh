#!/usr/bin/env bash
# Session 29, device call 1 (run from the repository root with baseline_tree/ = `git archive f894e01`, the
# session's starting commit): the TF32 default lowering (phase tensor_cores), the staged tensor-core kernel and
# SGEMM's register-blocked preset kernel with the launch contract's constant local strides, against the same
# kernels as f894e01 printed them, all in one call.
source benchmarks/h200_env.sh
nvidia-smi --query-gpu=name --format=csv,noheader
echo "== new: TF32 (default lowering, derived, staged)"
timeout 200 python3 benchmarks/tf32_gemm_gpu.py --sizes 4096x4096x4096 --shapes 128x128x64x64x32 \
  --staging flat --derived 128x128x64x64 --hand "" --default --repeat 5
echo "== baseline f894e01: TF32 staged"
(cd baseline_tree && PYTHONPATH=/tmp/site:$PWD timeout 120 python3 benchmarks/tf32_gemm_gpu.py --sizes 4096x4096x4096 \
  --shapes 128x128x64x64x32 --staging flat --derived "" --hand "" --repeat 5)
echo "== new: SGEMM register-blocked (the GPU preset's layout)"
timeout 120 python3 benchmarks/mm_gpu.py --sizes 4096x4096x4096 --rb 128x128x8x8x8 --only ib4 --repeat 5
echo "== baseline f894e01: SGEMM register-blocked"
(cd baseline_tree && PYTHONPATH=/tmp/site:$PWD timeout 120 python3 benchmarks/mm_gpu.py --sizes 4096x4096x4096 \
  --rb 128x128x8x8x8 --only ib4 --repeat 5)
