#!/usr/bin/env bash
# `bash benchmarks/h200_trust.sh` with OUT set (the device tool sets it): a map over more than 2^31 elements
# (64-bit indices end to end) and the explore of mm 4096^3 within a 120 s budget, wall time and peak memory.
# Needs the wheels in .whl/ (see benchmarks/h200.sh); NVIDIA OpenCL through our own ICD vendors folder.
set -uo pipefail
cd "$(dirname "$0")/.."
source benchmarks/h200_env.sh
git log -1 --oneline; grep -c "def index_type" codegen_opencl/opencl.py; nproc; free -g | head -2
measure() {  # wall seconds and peak RSS of the whole process tree (children included)
  python3 - "$@" <<'PY'
import resource, subprocess, sys, time
t = time.monotonic()
rc = subprocess.call(sys.argv[1:])
print(f"== rc {rc}, wall {time.monotonic() - t:.1f} s, max child RSS {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20:.2f} GiB", file=sys.stderr, flush=True)
PY
}
echo "== scal over 2^31 + 2^26 elements (64-bit indices), run and checked"
measure timeout 200 python3 -m dpia run examples/seed.py:scal --size N=2214592512 --json --db /tmp/run.sqlite > $OUT/scal.json 2> $OUT/scal.err
python3 -c "import json; r = json.load(open('$OUT/scal.json')); r.pop('derivation', None); print(r)" || tail -5 $OUT/scal.err
echo "== explore mm 4096^3 --budget 120s"
measure timeout 400 python3 -m dpia explore examples/seed.py:mm --size M=4096 --size N=4096 --size K=4096 --budget 120s --json --db /tmp/t.sqlite > $OUT/mm.json 2> $OUT/mm.err
grep -v "^step:" $OUT/mm.err | tail -25
python3 -c "import json; r = json.load(open('$OUT/mm.json')); r.pop('derivation', None); print(r)"
