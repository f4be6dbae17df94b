#!/usr/bin/env bash
# Session 29, device call 1 (run from the repository root with baseline_tree/ = `git archive f894e01`, the
# session's starting commit): the TF32 default lowering, staged tensor-core kernels and SGEMM's register-blocked
# kernel with the launch contract's constant local strides, against the same kernels printed as before.
source benchmarks/h200_env.sh
nvidia-smi --query-gpu=name --format=csv,noheader
echo "== new: TF32 (default lowering, staged, derived)"
python3 benchmarks/tf32_gemm_gpu.py --sizes 4096x4096x4096 --shapes 128x128x64x64x32,128x128x64x32x32 \
  --staging flat,rows --derived 128x128x64x64 --hand "" --default
echo "== baseline f894e01: TF32 staged"
(cd baseline_tree && PYTHONPATH=/tmp/site:$PWD python3 benchmarks/tf32_gemm_gpu.py --sizes 4096x4096x4096 \
  --shapes 128x128x64x64x32,128x128x64x32x32 --staging flat,rows --derived "" --hand "")
echo "== new: SGEMM register-blocked"
python3 benchmarks/mm_gpu.py --sizes 4096x4096x4096 --rb 128x128x8x8x8,64x64x8x8x8 --only ib4
echo "== baseline f894e01: SGEMM register-blocked"
(cd baseline_tree && PYTHONPATH=/tmp/site:$PWD python3 benchmarks/mm_gpu.py --sizes 4096x4096x4096 \
  --rb 128x128x8x8x8,64x64x8x8x8 --only ib4)
