# Sourced by the H200 scripts (h200_explore.sh, h200_suite.sh, h200_trust.sh), from the repository root: installs
# the CPython 3.12 wheels carried in .whl/ (see benchmarks/h200.sh) and points the ICD loader at NVIDIA's OpenCL
# library through a vendors folder of our own (../shared/reference/gpu.md).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD
mkdir -p /tmp/icd && echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd DPIA_DEVICE=nvidia PYTHONUNBUFFERED=1
