"""Stage 1's size and time per program at sequence lengths 2 and 3 (dpia.explore.algorithmic):
variants per length, seconds, and whether mm has the register-blocked SGEMM's sequence.

    python benchmarks/stage1_table.py [NAME ...]      # mm sum gemv jacobi2d_5 hotspot2d nbody kmeans

mm and sum are examples/seed.py's (mm 1024^3, sum 2^26), the others examples/suite.py's at
their moderate sizes.  Prints a Markdown table."""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "examples")]

import seed  # noqa: E402
import suite  # noqa: E402

from dpia.explore.algorithmic import Heuristics, algorithmic_variants  # noqa: E402
from dpia.explore.stages import prepared_body  # noqa: E402

DEFAULT = ["mm", "sum", "gemv", "jacobi2d_5", "hotspot2d", "nbody", "kmeans"]
SGEMM = ["tile_2d", "tile_reduction", "register_blocking_2d"]


def program(name: str):
    if name == "mm":
        return seed.mm, {"M": 1024, "N": 1024, "K": 1024}
    if name == "sum":
        return seed.total, {"N": 1 << 26}
    entry = suite.BY_NAME[name]
    return entry.program, {k.upper(): v for k, v in entry.moderate.items()}


def main(names: list[str]) -> None:
    print("| program | length | variants (per length) | stage 1 s | SGEMM sequence |")
    print("|---|---|---|---|---|")
    for name in names or DEFAULT:
        prog, sizes = program(name)
        body = prepared_body(prog, sizes)
        for length in (2, 3):
            start = time.perf_counter()
            variants = algorithmic_variants(body, sizes, Heuristics(length=length))
            seconds = time.perf_counter() - start
            counts = Counter(len(v.steps) for v in variants)
            per = "/".join(str(counts[d]) for d in range(1, length + 1))
            sgemm = any([s.move for s in v.steps] == SGEMM for v in variants)
            print(f"| {name} | {length} | {len(variants)} ({per}) | {seconds:.1f} | {'yes' if sgemm else '-'} |",
                  flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
