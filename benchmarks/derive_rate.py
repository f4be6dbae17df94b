"""How many sampled points of the generated space derive (issue 12): a point that fails to
derive is a wasted candidate of the search.

For each program (the suite's, examples/suite.py, and seed's sum and mm) at small sizes, the
space is built for a CPU and a GPU (dpia.explore.space.DeviceLimits as in tests/test_presets.py)
with the given heuristics; up to K points per skeleton are sampled (seeded) and derived as the
evaluator derives them (the lcm of the values as facts, then their product); the table says
how many derived and groups the failures by the move that raised and the first line of its
message.

    python benchmarks/derive_rate.py                          # every program, K=2, both heuristics
    python benchmarks/derive_rate.py --only sum gemv -k 4 --loops-only --failures 5
"""

from __future__ import annotations

import argparse
import collections
import random
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples"))

import functional as fl  # noqa: E402
from dpia.explore.algorithmic import Heuristics  # noqa: E402
from dpia.explore.space import DeviceLimits, Point, Space  # noqa: E402
from functional.derivation import derive  # noqa: E402
from functional.errors import FunctionalError  # noqa: E402

CPU = DeviceLimits(max_work_group_size=4096, local_mem_bytes=512 * 1024, compute_units=2)
GPU = DeviceLimits(max_work_group_size=1024, local_mem_bytes=48 * 1024, compute_units=132, device_type="GPU")
HEURISTICS = {"default": Heuristics(), "loops": Heuristics(loops=True)}
_LABEL = re.compile(r"\b(\w+)\([^()]*\)@(?:[\d.]+|root): ")  # a step's label (Step.__str__) before its reason


def programs() -> dict[str, tuple[fl.Expr, dict[str, int]]]:
    """name -> (program, small sizes): seed's sum and mm, then the suite and its alternatives."""
    import seed
    import suite

    out = {"sum": (seed.total, {"N": 1024}), "mm": (seed.mm, {"M": 32, "N": 32, "K": 32})}
    for entry in suite.SUITE + suite.ALTERNATIVES:
        out[entry.name] = (entry.program, {k.upper(): v for k, v in entry.small.items()})
    return out


def derive_point(space: Space, point: Point) -> None:
    """As the evaluator derives a point (dpia.explore.evaluate.Evaluator.derive): with the lcm
    of its values as facts, then with their product."""
    try:
        derive(space.program_for(point), space.strategy(point))
    except FunctionalError:
        derive(space.program_for(point, product=True), space.strategy(point))


def failure_key(exc: BaseException) -> tuple[str, str]:
    """(the move that raised, the first line of its message with the labels of enclosing
    steps removed and numbers generalised), so equal causes at other values group together."""
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    labels = list(_LABEL.finditer(text))
    move = labels[-1].group(1) if labels else "-"
    text = text[labels[-1].end():] if labels else text
    while (m := re.match(r"^\w+: ", text)) is not None and not text[m.end():].startswith(" "):
        text = text[m.end():]  # the macro's and rule's names the step's reason repeats
    return move, re.sub(r"\d+", "#", text)[:110]


def sample_points(space: Space, k: int, seed: str, skeletons: int | None = None) -> list[Point]:
    """Up to `k` points of each of up to `skeletons` skeletons (all when None), seeded."""
    rng = random.Random(seed)
    families = list(space.by_family().items())
    if skeletons is not None and len(families) > skeletons:
        families = rng.sample(families, skeletons)
    out = []
    for name, points in families:
        out += rng.sample(points, min(k, len(points)))
    return out


def measure(name: str, program, sizes: dict, limits: DeviceLimits, heuristics: Heuristics, k: int, label: str,
            skeletons: int | None = None):
    """(skeletons, sampled, derived, failures: Counter of keys, examples: key -> first point)."""
    space = Space.build(program, sizes, limits, heuristics=heuristics)
    points = sample_points(space, k, f"{name}:{label}", skeletons)
    failures: collections.Counter = collections.Counter()
    examples: dict = {}
    for point in points:
        try:
            derive_point(space, point)
        except FunctionalError as exc:
            key = failure_key(exc)
            failures[key] += 1
            examples.setdefault(key, str(point))
    return len(space.families), len(points), len(points) - sum(failures.values()), failures, examples


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", help="program names (default: all)")
    ap.add_argument("-k", type=int, default=2, help="points sampled per skeleton")
    ap.add_argument("--skeletons", type=int, default=None, help="skeletons sampled per space (default: all)")
    ap.add_argument("--loops-only", action="store_true", help="only Heuristics(loops=True)")
    ap.add_argument("--devices", nargs="*", default=["CPU", "GPU"])
    ap.add_argument("--failures", type=int, default=3, help="failure groups listed per row")
    ap.add_argument("--examples", action="store_true", help="print a failing point of each group")
    args = ap.parse_args(argv)
    table = programs()
    names = args.only or list(table)
    heuristics = {"loops": HEURISTICS["loops"]} if args.loops_only else HEURISTICS
    limits = {"CPU": CPU, "GPU": GPU}
    print("| program | device | heuristics | skeletons | sampled | derived | failed | rate | seconds | failures (move: message) x count |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    worst = 1.0
    for name in names:
        program, sizes = table[name]
        for device in args.devices:
            for hname, h in heuristics.items():
                start = time.perf_counter()
                n_sk, n, ok, failures, examples = measure(name, program, sizes, limits[device], h, args.k,
                                                          f"{device}:{hname}", args.skeletons)
                rate = ok / n if n else 1.0
                worst = min(worst, rate)
                groups = "; ".join(f"{m}: {msg} x{c}" for (m, msg), c in failures.most_common(args.failures))
                print(f"| {name} | {device} | {hname} | {n_sk} | {n} | {ok} | {n - ok} | {rate:.0%} | "
                      f"{time.perf_counter() - start:.0f} | {groups} |", flush=True)
                if args.examples:
                    for key, point in examples.items():
                        print(f"    {key[0]}: {key[1]}\n        e.g. {point}", flush=True)
    print(f"\nworst rate: {worst:.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
