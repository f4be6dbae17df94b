#!/usr/bin/env bash
# The fuzzer on a machine with many cores and no packages of ours (the lent GPU host, run on its CPU
# through PoCL): `OUT=dir bash benchmarks/fuzz_many_cores.sh COUNT JOBS`.  Needs the CPython 3.12
# wheels in .whl/ (see benchmarks/h200.sh) and pocl-binary-distribution's in .whl_pocl/.
set -uo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl .whl_pocl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
unset DPIA_DEVICE OCL_ICD_VENDORS
python3 -c "import pyopencl as cl; print([d.name for p in cl.get_platforms() for d in p.get_devices()])"
git log -1 --oneline 2>/dev/null; nproc
python3 -m dpia.fuzz --count "${1:-10000}" --seed 0 --jobs "${2:-14}" --report "$OUT/fuzz.json" 2>&1 \
  | grep -v "CompilerWarning\|lambda: self._prg\|generated\.$"
