#!/usr/bin/env bash
# A stripped Ray wheel small enough to carry to the GPU host with the exploration's other
# wheels (the device tool carries 64 MiB in all): Ray's core only (the GCS server, the
# raylet, the Python worker and what a local cluster starts: the runtime-env agent and the
# dashboard agent's Python), no Java jar, no dashboard UI, no libraries (rllib, tune, serve,
# train, data, llm, air, workflow), no tests; the binaries' symbols stripped; RECORD written
# again; members compressed with LZMA (read by pip's zipfile; deflate with COMPRESSION=deflate).
#
# Ray's needs that the GPU host's image lacks (jsonschema and its own: KINDS.md's package list
# has click, filelock, msgpack, packaging, protobuf, pyyaml, requests, attrs) are downloaded
# beside it, at the versions installed here.
#
# Usage: bash benchmarks/ray_wheel.sh [PYTHON_VERSION] [OUT_DIR]
#   PYTHON_VERSION: 3.12 (the GPU host's python3, the default) or 3.11 (this machine's, for tests)
#   OUT_DIR: .whl_ray (an ignored folder: carry it with the device tool)
# The Ray version is the one installed here (pip download fetches its wheel once, into
# ${RAY_WHEEL_CACHE:-/tmp/ray_wheel_cache}).  Check it: python -m venv --system-site-packages V &&
# V/bin/pip install --no-deps OUT_DIR/ray-*.whl && V/bin/python -m pytest tests/test_cluster.py
set -euo pipefail
pyver=${1:-3.12}
cd "$(dirname "$0")/.."
out=${2:-.whl_ray}
version=$(python3 -c "import importlib.metadata as m; print(m.version('ray'))")
cache=${RAY_WHEEL_CACHE:-/tmp/ray_wheel_cache}
tag=cp${pyver/./}
mkdir -p "$cache" "$out"
original=$(ls "$cache"/ray-"$version"-"$tag"-"$tag"-*.whl 2>/dev/null | head -1 || true)
if [ -z "$original" ]; then
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$pyver" --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d "$cache" "ray==$version"
  original=$(ls "$cache"/ray-"$version"-"$tag"-"$tag"-*.whl | head -1)
fi
needs=$(python3 -c "import importlib.metadata as m; print(' '.join(f'{n}=={m.version(n)}' for n in
  ('jsonschema', 'jsonschema-specifications', 'referencing', 'rpds-py')))")
# shellcheck disable=SC2086
python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$pyver" --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 -d "$out" $needs
python3 - "$original" "$out" "${COMPRESSION:-lzma}" <<'PY'
import base64, hashlib, os, shutil, subprocess, sys, tempfile, zipfile
from pathlib import Path

original, out, compression = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
DROPPED = ("ray/jars/", "ray/dashboard/client/", "ray/rllib/", "ray/tune/", "ray/serve/", "ray/train/",
           "ray/data/", "ray/llm/", "ray/air/", "ray/workflow/", "ray/setup-dev.py")
def dropped(name: str) -> bool:
    parts = name.split("/")
    return (name.startswith(DROPPED) or "tests" in parts[:-1] or name.endswith((".map", ".pyi", ".pxd"))
            or "/__pycache__/" in name)

work = Path(tempfile.mkdtemp(prefix="raywhl."))
try:
    with zipfile.ZipFile(original) as whl:
        names = [n for n in whl.namelist() if not n.endswith("/") and not dropped(n)]
        modes = {n: whl.getinfo(n).external_attr for n in names}  # extract() drops them: the binaries' x bits
        for name in names:
            whl.extract(name, work)
    record = next(n for n in names if n.endswith(".dist-info/RECORD"))
    for name in names:  # symbols are for debuggers: the program runs without them
        path = work / name
        with open(path, "rb") as f:
            elf = f.read(4) == b"\x7fELF"
        if elf:
            subprocess.run(["strip", "--strip-unneeded", str(path)], check=True)
    lines = []
    for name in names:
        if name == record:
            continue
        data = (work / name).read_bytes()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        lines.append(f"{name},sha256={digest},{len(data)}")
    lines.append(f"{record},,")
    (work / record).write_text("\n".join(lines) + "\n")
    method = zipfile.ZIP_LZMA if compression == "lzma" else zipfile.ZIP_DEFLATED
    target = out / original.name
    partial = target.with_suffix(".partial")
    with zipfile.ZipFile(partial, "w", method, compresslevel=None if method == zipfile.ZIP_LZMA else 9) as whl:
        for name in [n for n in names if ".dist-info/" not in n] + [n for n in names if ".dist-info/" in n]:
            info = zipfile.ZipInfo.from_file(work / name, name)
            info.compress_type, info.external_attr = method, modes[name]
            with open(work / name, "rb") as f:
                whl.writestr(info, f.read())
    os.replace(partial, target)
    print(f"{target}: {target.stat().st_size / 2**20:.1f} MiB (from {original.stat().st_size / 2**20:.1f} MiB, "
          f"{len(names)} files kept)")
finally:
    shutil.rmtree(work)
PY
