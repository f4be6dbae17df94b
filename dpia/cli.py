"""The `dpia` command line: one table of subcommands, each a parser setup and a runner.

    dpia rules [--family F] [--json]                    the rule catalogue
    dpia rules --check [--instances K] [--seed S]       ... each rule checked on K random instances
    dpia devices [--json]                               every OpenCL device; * marks the default
    dpia run FILE[:NAME] --size N=1048576 [--json]      run the best known variant (or the default) on
                                                        random inputs, check it, print time and GB/s
    dpia explore FILE[:NAME] --size ... --budget 10m    search lowerings, store them in the tuning DB
        [--candidates N] [--strategy random|evolutionary|bayesian] [--plots [PREFIX]]   (PREFIX default:
        dpia-NAME-SIZES in the current directory)
        [--cluster local|auto|ADDRESS]                  ... on a Ray cluster (pip install 'dpia[ray]')
        FILE[:NAME] ... --size N=2^16,2^20 --device A --device B   a sweep: every program at every
                                                        size on every device, each stored under its key,
                                                        the devices at once (each device's in turn)
    dpia db merge TARGET SOURCE...                      add to TARGET the rows of each SOURCE it lacks
    dpia show FILE[:NAME] [--size ...]                  the chosen variant's derivation, imperative
        [--stage STAGE]                                 program and OpenCL source; --stage: what one
                                                        stage of dpia.pipeline gives (derive .. build)

FILE is a .py file (its module-level programs; NAME picks one) or a .dpia/.txt file holding one
program in the text syntax.  --db PATH chooses the tuning database (else $DPIA_TUNING_DB, else the
per-user cache); --device a device by a substring of "platform: device" (else $DPIA_DEVICE).

Exit codes: 0 success, 1 a check failed (or no device), 2 bad usage (message on stderr), 141 the
reader of the output went away (`dpia rules | head -1`).  `dpia --version` prints the version.  To add a
subcommand, write `_NAME_args(parser)` and `_NAME(args) -> int` and list them in COMMANDS.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
import threading
import time
import warnings
from collections.abc import Callable
from typing import NamedTuple


class UsageError(Exception):
    """Bad input on the command line: reported on stderr, exit code 2."""


class CommandFailure(Exception):
    """The command could not do its work (no device, a kernel that does not build): reported
    on stderr, exit code 1."""


class Command(NamedTuple):
    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


# ------------------------------------------------------------------------------ rules


def _rules_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--family", action="append", metavar="F", help="only this family (repeatable)")
    p.add_argument("--json", action="store_true", help="print a JSON list instead of a table")
    p.add_argument("--check", action="store_true", help="check every rule against the interpreter")
    p.add_argument("--instances", type=_positive_int, default=20, metavar="K",
                   help="random instances per rule for --check (default 20)")
    p.add_argument("--seed", type=int, default=0, help="shifts the random instances of --check (default 0)")


def _rules(args: argparse.Namespace) -> int:
    from functional.rules import RULES, catalogue
    from functional.rules.check import check_rule

    rows = catalogue()
    if args.family:
        known = sorted({r["family"] for r in rows})
        unknown = [f for f in args.family if f not in known]
        if unknown:
            raise UsageError(f"unknown family {', '.join(map(repr, unknown))}; the families are: {', '.join(known)}")
        rows = [r for r in rows if r["family"] in args.family]
    failed = 0
    for r in rows:
        r["params"] = list(r["params"])
        if args.check:
            res = check_rule(RULES[r["name"]], args.instances, args.seed)
            r.update(passed=res.passed, instances=res.instances, failure=res.failure)
            failed += not res.passed
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        _print_table(rows, args.check)
    return 1 if failed else 0


def _print_table(rows: list[dict], checked: bool) -> None:
    def status(r: dict) -> str:
        if checked:
            return f"pass ({r['instances']})" if r["passed"] else "FAIL"
        return "example" if r["checked"] else "unchecked"

    table = [("FAMILY", "RULE", "PARAMS", "CHECK", "EQUATION")]
    table += [(r["family"], r["name"], ", ".join(r["params"]) or "-", status(r), r["equation"]) for r in rows]
    widths = [max(len(row[k]) for row in table) for k in range(4)]
    for row, r in zip(table, [None] + rows):
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[4])
        if r is not None and checked and not r["passed"]:
            print(f"    ! {r['failure']}")
    summary = f"{len(rows)} rules"
    if checked:
        failed = sum(not r["passed"] for r in rows)
        summary += f": {len(rows) - failed} passed, {failed} failed"
    print(summary)


# ---------------------------------------------------------------------------- devices


_DEVICE_COLUMNS = (("platform", "PLATFORM"), ("device", "DEVICE"), ("device_type", "TYPE"),
                   ("driver_version", "DRIVER"), ("compute_units", "CUS"), ("max_work_group_size", "MAX WG"),
                   ("local_mem_bytes", "LOCAL B"), ("global_mem_bytes", "GLOBAL B"),
                   ("platform_version", "PLATFORM VERSION"))


def _devices_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print a JSON list of device identities")


def _devices(args: argparse.Namespace) -> int:
    # The driver layer: the CLI may import codegen_opencl, lazily like the dpia.compile facade.
    from codegen_opencl.runtime import RuntimeError_, choose_device, device_identity, device_key, devices

    found = devices()
    if not found:
        print("dpia devices: no OpenCL device found (install pocl-binary-distribution for a CPU device)",
              file=sys.stderr)
        return 1
    try:
        default = choose_device()
    except RuntimeError_ as exc:  # e.g. DPIA_DEVICE names no device: list them anyway, none marked
        print(f"dpia devices: warning: {exc}", file=sys.stderr)
        default = None
    # Devices compare by OpenCL handle, so two identical cards are not both marked.
    rows = [{**device_identity(d), "key": device_key(d), "default": d == default} for d in found]
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        _print_device_table(rows)
    return 0


def _print_device_table(rows: list[dict]) -> None:
    table = [tuple(title for _, title in _DEVICE_COLUMNS)]
    table += [tuple(str(r[field]) for field, _ in _DEVICE_COLUMNS) for r in rows]
    widths = [max(len(row[k]) for row in table) for k in range(len(_DEVICE_COLUMNS))]
    for row, mark in zip(table, [" "] + ["*" if r["default"] else " " for r in rows]):
        print(mark + " " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    print(f"{len(rows)} device(s); * the default (set DPIA_DEVICE to choose another)")


# --------------------------------------------------------------------- programs: shared


class _Loaded(NamedTuple):
    name: str
    file: str
    program: object  # a typed functional.Expr
    sizes: dict


def _program_args(p: argparse.ArgumentParser, sizes_help: str, sweep: bool = False) -> None:
    """`sweep`: several programs and devices (explore)."""
    p.add_argument("program", metavar="FILE[:NAME]", nargs="+" if sweep else None,
                   help="a .py file's module-level program (NAME picks one) or a .dpia/.txt file with one program"
                        + ("; several: each is explored" if sweep else ""))
    p.add_argument("--size", action="append", default=[], metavar="NAME=VALUE", help=sizes_help)
    p.add_argument("--device", metavar="D", action="append" if sweep else None,
                   help="a substring of 'platform: device' (default: $DPIA_DEVICE, else PoCL)"
                        + ("; repeatable: each is explored" if sweep else ""))
    p.add_argument("--db", metavar="PATH",
                   help="the tuning database (default: $DPIA_TUNING_DB, else tuning.sqlite in the per-user cache)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")


def _load_program(args: argparse.Namespace, complete: bool, inputs: bool = True) -> _Loaded:
    """The program and its sizes; `complete`: every size is needed; `inputs`: the command
    makes the inputs, so they must fit in this machine's memory."""
    from .programs import ProgramLoadError, SizeSpecError, check_fits_in_memory, load, parse_sizes, split_spec

    try:
        name, program = load(args.program)
        sizes = parse_sizes(args.size, program, complete=complete)
        if complete and inputs:
            check_fits_in_memory(program, sizes)
    except (ProgramLoadError, SizeSpecError) as exc:
        raise UsageError(str(exc)) from None
    return _Loaded(name, str(split_spec(args.program)[0]), program, sizes)


def _open_device(which: str | None):
    from codegen_opencl.runtime import RuntimeError_, choose_device, devices

    if not devices():
        raise CommandFailure("no OpenCL device found (install pocl-binary-distribution for a CPU device)")
    try:
        return choose_device(which)
    except RuntimeError_ as exc:  # no device matches --device (or $DPIA_DEVICE)
        raise UsageError(str(exc)) from None


@contextlib.contextmanager
def _warnings_to_stderr(command: str):
    """Our warnings (an unusable tuning database, a stale variant) as `dpia CMD: warning: ...`;
    others (e.g. pyopencl's compiler output) as Python shows them."""
    from .variants import TuningWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TuningWarning)
        yield
    for w in caught:
        if issubclass(w.category, TuningWarning):
            print(f"dpia {command}: warning: {w.message}", file=sys.stderr)
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)


def _sizes_text(sizes: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in sizes.items()) or "-"


def _measure(loaded: _Loaded, device, db, seed: int, repeat: int, check: bool, lowered=None) -> dict:
    """Compile (best known variant or default; `lowered`: this (low program, Variant)), run
    on random inputs, check against the interpreter, time."""
    import dpia
    from codegen_opencl.runtime import device_key
    from functional.errors import FunctionalError

    from .programs import TOLERANCE, bytes_moved, known_flops, random_inputs

    inputs = random_inputs(loaded.program, loaded.sizes, seed)
    try:
        launch = lowered[1].launch if lowered is not None else {}  # a replayed variant's (else the database's)
        kernel = dpia.compile(loaded.program if lowered is None else lowered[0], device=device, db=db,
                              name=dpia.kernel_name_for(loaded.name), **launch)
        got = kernel(*inputs)
        time_s = kernel.time(*inputs, repeat=repeat)
    except FunctionalError as exc:  # a program the translation refuses, a kernel that does not build
        raise CommandFailure(str(exc)) from None
    # The variant is chosen at the first call (per sizes); None: a low-level program, as written.
    variant = lowered[1] if lowered is not None else getattr(kernel, "variant", None)
    checked = _check(loaded, device, seed, inputs, got, lowered, variant) if check else None
    error = checked.max_rel_error if checked is not None else None
    moved, flops = bytes_moved(inputs, got), known_flops(loaded.program, loaded.sizes)
    report = {
        "program": loaded.name, "file": loaded.file, "device": device_key(device), "sizes": loaded.sizes,
        "variant": variant.kind if variant else "as written", "note": variant.note if variant else "",
        "correct": None if error is None else bool(error <= TOLERANCE), "max_rel_error": error,
        "tolerance": TOLERANCE, "time_s": time_s, "bytes": moved, "gbps": moved / time_s / 1e9,
        "derivation": variant.derivation if variant else None, "launch": dict(variant.launch) if variant else {},
    }
    if checked is not None:
        report.update(checked=checked.describe(), check=checked.as_dict())
    if flops is not None:
        report.update(flops=flops, gflops=flops / time_s / 1e9)
    return report


def _target(device):
    """What the default lowering is told of the device (None without one: the default Target)."""
    from .explore.space import DeviceLimits

    return DeviceLimits.of(device).lowering_target() if device is not None else None


def _check(loaded: _Loaded, device, seed: int, inputs: tuple, got, lowered, variant):
    """The kernel's result against the interpreter, in bounded memory: in full where the
    interpreter can run the real sizes, else at reduced sizes plus sampled rows (dpia.verify)."""
    from functional.derivation import Derivation
    from functional.interp import interpret

    from .programs import TOLERANCE, relative_error
    from .variants import default_variant
    from .verify import Verification, interpretable, verify

    if interpretable(loaded.program, loaded.sizes):
        return Verification("full", relative_error(got, interpret(loaded.program, *inputs)), TOLERANCE)
    if lowered is not None:
        low = lowered[0]
    elif variant is not None:
        low = Derivation.from_text(variant.derivation).replay()
    else:
        low = loaded.program  # lowered by hand: it is its own lowering
    return verify(loaded.program, low, loaded.sizes, seed=seed, device=device, inputs=inputs,
                  lowered_at=lambda sizes: default_variant(loaded.program, sizes, target=_target(device))[0])


def _stored_counts(db, loaded: _Loaded, device) -> dict | None:
    """How many candidates the database holds for this program, sizes and device."""
    if db is None:
        return None
    from codegen_opencl.runtime import device_key

    from .programs import canonical
    from .explore.search import FAILED  # the one definition of a failure: the exploration's and the plots'

    stored = db.candidates(canonical(loaded.program), loaded.sizes, device_key(device))
    return {"tried": len(stored), "failed": sum(c.status in FAILED for c in stored)}


def _print_measurement(r: dict, repeat: int) -> None:
    print(f"{r['program']} on {r['device']}")
    print(f"sizes     {_sizes_text(r['sizes'])}")
    print(f"variant   {r['variant']}" + (f" ({r['note']})" if r["note"] else ""))
    if r.get("launch"):
        from .explore.launch import describe as describe_launch

        print(f"launch    {describe_launch(r['launch'])} for the kernels without work-groups")
    if r["correct"] is None:
        print("correct   not checked")
    else:
        verdict = "yes" if r["correct"] else "NO"
        print(f"correct   {verdict} (largest relative error {r['max_rel_error']:.1e}, tolerance {r['tolerance']:.0e})")
    print(f"time      {r['time_s']:.4g} s (median of {repeat})")
    if "gflops" in r:
        print(f"          {r['gflops']:.4g} GFLOP/s ({r['flops']:.4g} floating-point operations)")
    else:
        print(f"          {r['gbps']:.4g} GB/s ({r['bytes']} bytes of inputs and output)")


# ------------------------------------------------------------------------------- run


def _run_args(p: argparse.ArgumentParser) -> None:
    _program_args(p, "a size of the program, e.g. N=1048576 or N=2^20 (repeatable; every size is needed)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    p.add_argument("--repeat", type=_positive_int, default=10, help="timed runs; the median is reported (default 10)")
    p.add_argument("--no-check", dest="check", action="store_false",
                   help="skip the comparison with the interpreter (slow for large matrix products)")


def _run(args: argparse.Namespace) -> int:
    from .variants import open_database

    loaded = _load_program(args, complete=True)
    device = _open_device(args.device)
    with _warnings_to_stderr("run"), open_database(args.db) as db:
        report = _measure(loaded, device, db if db is not None else False, args.seed, args.repeat, args.check)
        report["candidates"] = _stored_counts(db, loaded, device)
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        _print_measurement(report, args.repeat)
        if report["candidates"] is not None:
            c = report["candidates"]
            print(f"tuning    {c['tried']} candidate(s) stored for these sizes and device, {c['failed']} failed")
    return 1 if report["correct"] is False else 0


# --------------------------------------------------------------------------- explore


_BUDGET_PART = re.compile(r"(\d+(?:\.\d+)?)([smh]?)")
_UNIT_SECONDS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_budget(text: str) -> float:
    """Seconds from "90s", "10m", "1h", "1h30m" or a plain number of seconds; positive."""
    compact = text.strip().lower().replace(" ", "")
    parts = _BUDGET_PART.findall(compact)
    if not compact or "".join(number + unit for number, unit in parts) != compact:
        raise argparse.ArgumentTypeError(f"expected a duration like 90s, 10m or 1h, got {text!r}")
    seconds = sum(float(number) * _UNIT_SECONDS[unit] for number, unit in parts)
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"the budget must be positive, got {text!r}")
    return seconds


def _explore_args(p: argparse.ArgumentParser) -> None:
    from .explore.search import SEARCHES

    _program_args(p, "a size of the program, e.g. N=1048576 or N=2^20 (repeatable; every size is needed); "
                     "N=2^16,2^20: each value is explored", sweep=True)
    p.add_argument("--budget", type=parse_budget, metavar="TIME",
                   help="time to search: 90s, 10m, 1h (default 10m unless --candidates is given; for each "
                        "program, size and device of a sweep)")
    p.add_argument("--candidates", type=_positive_int, metavar="N", help="stop after N candidates")
    p.add_argument("--strategy", choices=sorted(SEARCHES), default="bayesian",
                   help="how to choose the next candidates (default bayesian)")
    p.add_argument("--seed", type=int, default=0, help="seed of the search and of the inputs (default 0)")
    p.add_argument("--workers", type=_positive_int, metavar="W", help="candidates prepared in parallel processes")
    p.add_argument("--cluster", metavar="ADDRESS",
                   help="explore on Ray: 'local' (a cluster on this machine), 'auto' (the running one) or a "
                        "cluster's address; candidates are prepared on its CPUs, measured by one actor per device")
    p.add_argument("--plots", nargs="?", const="", metavar="PREFIX",
                   help="write PREFIX_space.png and PREFIX_progress.png (default PREFIX: "
                        "dpia-NAME-SIZES in the current directory)")


DEFAULT_BUDGET_S = 600.0  # when neither --budget nor --candidates bounds the search


class _ProgressBar:
    """The exploration's progress on stderr: candidates done, failures, best time so far.
    Redrawn in place on a terminal, one line per candidate otherwise (logs)."""

    WIDTH = 24

    def __init__(self, stream, budget_s: float | None, max_candidates: int | None):
        self.stream, self.budget_s, self.max_candidates = stream, budget_s, max_candidates
        self.started = time.monotonic()
        self.done = self.failed = 0
        self.best_s: float | None = None
        self.phase, self.busy = "", ""  # from the exploration's Status: before and between candidates
        self._drawn_phase, self._drawn_at = None, -1e9
        self.lines = 0  # lines written, for close()

    def status(self, s) -> None:
        """An exploration's Status (dpia.explore): drawn at each new phase, and on a terminal
        about once a second (the counts of candidates compiling and measuring change)."""
        self.phase = s.phase
        self.busy = f", {s.compiling} compiling, {s.measuring} measuring" if s.compiling or s.measuring else ""
        if s.best_s is not None:
            self.best_s = s.best_s
        now = time.monotonic()
        if s.phase != self._drawn_phase or (self.stream.isatty() and now - self._drawn_at >= 1.0) \
                or now - self._drawn_at >= 10.0:
            self._drawn_phase, self._drawn_at = s.phase, now
            self._draw()

    def __call__(self, candidate) -> None:
        from .explore.search import FAILED  # here: the CLI starts without the exploration modules

        self.done += 1
        self.failed += candidate.status in FAILED
        if candidate.status == "ok" and (self.best_s is None or candidate.time_s < self.best_s):
            self.best_s = candidate.time_s
        self._draw()

    def _draw(self) -> None:
        line = self.line()
        if self.stream.isatty():
            self.stream.write("\r\033[K" + line)
        else:
            self.stream.write(line + "\n")
        self.lines += 1
        self.stream.flush()

    def line(self) -> str:
        elapsed = time.monotonic() - self.started
        fractions = [self.done / self.max_candidates] if self.max_candidates else []
        if self.budget_s:
            fractions.append(elapsed / self.budget_s)
        filled = int(self.WIDTH * min(1.0, max(fractions, default=0.0)))
        best = f"{self.best_s * 1e3:.4g} ms" if self.best_s is not None else "none yet"
        phase = f"{self.phase}{self.busy}: " if self.phase else ""
        return (f"[{'#' * filled}{'.' * (self.WIDTH - filled)}] {phase}{self.done} candidates, {self.failed} failed, "
                f"best {best}, {elapsed:.0f} s")

    def close(self) -> None:
        if self.lines and self.stream.isatty():
            self.stream.write("\n")
        self.lines = 0  # closed: a second close writes nothing


def _explore(args: argparse.Namespace) -> int:
    from functional.errors import FunctionalError

    from .explore.tuning import TuningDB, TuningError

    programs = _sweep_programs(args)
    if args.plots is not None:  # refuse now, not after the whole exploration
        from .explore.plots import PlotError, check_available

        try:
            check_available()
        except PlotError as exc:
            raise UsageError(f"--plots: {exc}") from None
    budget = args.budget if args.budget is not None or args.candidates else DEFAULT_BUDGET_S
    try:
        db = TuningDB(args.db)
    except (TuningError, OSError) as exc:  # exploring needs somewhere to store its candidates
        raise UsageError(f"cannot use the tuning database: {exc}") from None
    try:
        with db, _warnings_to_stderr("explore"), _open_cluster(args, len(set(args.device or [None]))) as cluster:
            targets = [_resolve_device(d, cluster) for d in (args.device or [None])]
            entries = [(loaded, target) for loaded in programs for target in targets]
            explored = _explore_entries(args, entries, _device_lanes(entries), db, budget, cluster)
    except FunctionalError as exc:
        raise CommandFailure(str(exc)) from None
    except KeyboardInterrupt:  # every candidate measured so far is already committed
        print(f"dpia explore: interrupted; the candidates measured so far are in {db.path} "
              f"(`dpia show` uses the best of them)", file=sys.stderr)
        return 130
    failed = False
    for (loaded, _), (result, report) in zip(entries, explored):
        failed |= _print_explored(args, loaded, result, report, len(entries) > 1)
    if args.json:
        reports = [report for _, report in explored]
        print(json.dumps(reports[0] if len(reports) == 1 else reports, indent=1))
    return 1 if failed else 0


def _explore_entries(args: argparse.Namespace, entries: list, lanes: list, db, budget, cluster) -> list[tuple]:
    """(Exploration, report) of each entry: the entries of different devices at once (a lane
    each, dpia.explore.sweep.run_lanes; their progress lines labelled), of one device in turn."""
    from .explore.sweep import run_lanes
    from .explore.tuning import TuningDB

    lock = threading.Lock()

    def run(index: int, check) -> tuple:
        loaded, device = entries[index]
        label = f"{loaded.name} at {_sizes_text(loaded.sizes)} on {device.name}"
        if len(entries) > 1:
            print(f"dpia explore: {label}", file=sys.stderr)
        stream = sys.stderr if len(lanes) == 1 else _LabelledLines(sys.stderr, label, lock)
        tuning_db = db if len(lanes) == 1 else TuningDB(db.path)  # a connection per thread
        try:
            return _explore_one(args, loaded, device, tuning_db, budget, cluster, stream, check)
        finally:
            if tuning_db is not db:
                tuning_db.close()

    return run_lanes(lanes, run)


class _LabelledLines:
    """A stream for one lane's progress when several run at once: whole lines, each led by
    the lane's label, never redrawn in place (the lanes' lines interleave)."""

    def __init__(self, stream, label: str, lock: threading.Lock):
        self._stream, self._label, self._lock = stream, label, lock

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> None:
        with self._lock:
            for line in text.splitlines():
                self._stream.write(f"{self._label}: {line}\n")

    def flush(self) -> None:
        with self._lock:
            self._stream.flush()


def _sweep_programs(args: argparse.Namespace) -> list[_Loaded]:
    """Every program at every combination of the sizes' values (`--size N=2^16,2^20`): with
    every device given (`_resolve_device`), the explorations of a sweep."""
    import itertools

    alternatives = []
    for spec in args.size:
        name, _, values = spec.partition("=")
        alternatives.append([f"{name}={v}" for v in values.split(",")] if "," in values else [spec])
    return [_load_program(argparse.Namespace(program=program, size=list(sizes)), complete=True)
            for program in args.program for sizes in itertools.product(*alternatives)]


class _Target(NamedTuple):
    """The device an exploration runs on.  `selector`: what explore's `device` gets (this
    host's pyopencl Device; with a cluster the --device text, None for the default, which
    the cluster's nodes resolve); `identity`: its device_identity, as the host that has it
    reports it (with a cluster the driver's host need not have it)."""

    selector: object
    identity: dict

    @property
    def key(self) -> str:
        from codegen_opencl.runtime import identity_key

        return identity_key(self.identity)

    @property
    def name(self) -> str:
        return self.identity["device"]


def _resolve_device(which: str | None, cluster) -> _Target:
    """The device --device names (None: $DPIA_DEVICE, else the default): this host's, or
    with a cluster the one a node of the cluster has (this host's is never opened)."""
    if cluster is None:
        from codegen_opencl.runtime import device_identity

        device = _open_device(which)
        return _Target(device, device_identity(device))
    from .explore.cluster import ClusterError

    try:
        return _Target(which, cluster.identity(which))
    except ClusterError as exc:  # no node has a device --device matches
        raise UsageError(str(exc)) from None


def _device_lanes(entries: list[tuple[_Loaded, _Target]]) -> list[list[int]]:
    """The entries' indices grouped by device (dpia.explore.sweep.run_lanes: a lane per device)."""
    lanes: dict[str, list[int]] = {}
    for index, (_, target) in enumerate(entries):
        lanes.setdefault(target.key, []).append(index)
    return list(lanes.values())


@contextlib.contextmanager
def _open_cluster(args: argparse.Namespace, lanes: int = 1):
    """The Ray cluster --cluster names (None without it), closed at the end; a local one
    with the CPUs of `lanes` explorations at once."""
    if args.cluster is None:
        yield None
        return
    from .explore.cluster import Cluster

    with Cluster.connect(args.cluster, num_cpus=max(2, (args.workers or 2) * lanes)) as cluster:
        yield cluster


def _explore_one(args: argparse.Namespace, loaded: _Loaded, device, db, budget, cluster, stream, check) -> tuple:
    """One entry's exploration, its progress on `stream`; `check` is called with each status
    (it stops the exploration when another lane of the sweep stopped)."""
    from .explore import explore

    progress = _ProgressBar(stream, budget, args.candidates)

    def status(state) -> None:
        check()
        progress.status(state)

    try:
        result = explore(loaded.program, loaded.sizes, device=device.selector, db=db, budget_s=budget,
                         max_candidates=args.candidates, search=args.strategy, seed=args.seed,
                         workers=args.workers, progress=progress, status=status, executor=cluster)
        progress.status(_last_status(result, "checking and timing the best variant"))
        return result, _explored_report(loaded, device, result, args.seed, db, cluster)
    finally:
        progress.close()


def _print_explored(args: argparse.Namespace, loaded: _Loaded, result, report: dict, sweep: bool) -> bool:
    """Write the plots and (without --json) the report of one exploration; True when it
    failed (a wrong best kernel, plots that could not be written)."""
    plots_failed = _write_plots(args, loaded, result, report, sweep)
    if not args.json:
        print(result.report())
        _print_measurement(report, report["repeat"])
        print(f"checked   {report['checked']}")
        print("== the best derivation\n" + (report["derivation"] or "none"))
    return report["correct"] is False or plots_failed


FINAL_TIMING_S = 2.0  # the best variant is timed again here for about this long (10 runs at most)


def _last_status(result, phase: str):
    from .explore import Status

    return Status(phase, result.elapsed_s, done=result.tried + result.reused, failed=result.failed,
                  best_s=result.best.time_s if result.best else None)


def _explored_report(loaded: _Loaded, device: _Target, result, seed: int, db=None, cluster=None) -> dict:
    """The exploration's summary and its best variant run again on the device (here, or
    with a cluster on a node that has it, `_run_best`).  Without a measured best, the
    variant `dpia run` would use (dpia.variants.choose_variant)."""
    from .explore.space import DeviceLimits
    from .variants import choose_variant, tuned_variant

    if result.best is not None and _is_the_default(result.best, result.default):
        kind = result.baseline if result.baseline in ("default", "preset", "tuned") else "default"
        lowered = tuned_variant(result.best, loaded.program, loaded.sizes, kind=kind,
                                note=f"no candidate was faster than the {kind} variant")
    elif result.best is not None:
        lowered = tuned_variant(result.best, loaded.program, loaded.sizes)
    else:
        lowered = choose_variant(loaded.program, loaded.sizes, device.key, db if db is not None else False,
                                 DeviceLimits.of_identity(device.identity))
    known_s = result.best.time_s if result.best is not None else None
    repeat = 3 if known_s is None else max(1, min(10, int(FINAL_TIMING_S / max(known_s, 1e-9))))
    if cluster is None:
        report = _run_best(device.selector, loaded, lowered, seed, repeat)
    else:  # where the device is: this host need not have it
        report = cluster.run_on_device(device.key, _run_best, loaded, lowered, seed, repeat)
    report.update(baseline=result.baseline)
    report.update(
        run_id=result.run_id, search=result.search, elapsed_s=result.elapsed_s,
        candidates={"tried": result.tried, "failed": result.failed, "duplicates": result.duplicates,
                    "reused": result.reused, "abandoned": result.abandoned},
        by_stage=dict(result.by_stage), by_rule=dict(result.by_rule),
        best_time_s=result.best.time_s if result.best else None,
        default_time_s=result.default.time_s if result.default and result.default.status == "ok" else None,
        speedup=result.speedup, lost=list(result.lost), dropped=list(result.dropped), space_s=result.space_s)
    return report


def _run_best(device, loaded: _Loaded, lowered: tuple, seed: int, repeat: int) -> dict:
    """The report of the variant `lowered` on `device`: timed `repeat` times, and checked
    in bounded memory (dpia.verify: at reduced sizes plus sampled rows at the real ones
    when the interpreter cannot run the real sizes)."""
    from .variants import default_variant
    from .verify import verify

    report = _measure(loaded, device, False, seed, repeat, False, lowered=lowered)
    checked = verify(loaded.program, lowered[0], loaded.sizes, seed=seed, device=device,
                     lowered_at=lambda sizes: default_variant(loaded.program, sizes, target=_target(device))[0])
    report.update(correct=checked.correct, max_rel_error=checked.max_rel_error, checked=checked.describe(),
                  check=checked.as_dict(), repeat=repeat)
    return report


def _is_the_default(best, default) -> bool:
    """The fastest candidate is the default lowering (the exploration's baseline)."""
    return bool(best.params.get("baseline")) or (default is not None and best.derivation == default.derivation
                                                  and best.params.get("launch") == default.params.get("launch"))


def _write_plots(args: argparse.Namespace, loaded: _Loaded, result, report: dict, sweep: bool = False) -> bool:
    """Write the plots when --plots asks; True when they could not be written.  In a sweep
    each exploration's prefix ends with its program, sizes and device."""
    if args.plots is None:
        return False
    from .explore.plots import PlotError, write_plots

    named = "dpia-{}-{}".format(loaded.name, "-".join(f"{k}{v}" for k, v in loaded.sizes.items()))
    if sweep:
        named += "-" + re.sub(r"[^A-Za-z0-9]+", "_", report["device"]).strip("_")
    prefix = (f"{args.plots}-{named}" if sweep else args.plots) if args.plots else named
    unit, work = ("GFLOP/s", report["flops"] / 1e9) if "flops" in report else ("GB/s", report["bytes"] / 1e9)
    try:
        paths = write_plots(result.candidates, prefix, unit=unit, work=work)
    except (PlotError, OSError) as exc:
        print(f"dpia explore: error: cannot write the plots: {exc}", file=sys.stderr)
        return True
    report["plots"] = [str(p) for p in paths]
    print(f"dpia explore: plots: {', '.join(report['plots'])}", file=sys.stderr)
    return False


# ------------------------------------------------------------------------------ show


SHOWN_LAST = "build"  # `show --stage` offers the stages up to this one (run, check, time: `dpia run`)


def _shown_stages():
    from .pipeline import PIPELINE

    return PIPELINE.between(PIPELINE.names[0], SHOWN_LAST)


def _show_args(p: argparse.ArgumentParser) -> None:
    from .pipeline import stage_help

    _program_args(p, "a size of the program (repeatable); with every size, the best variant stored for them "
                     "is shown, else the default strategy")
    stages = _shown_stages()
    p.add_argument("--stage", choices=[s.name for s in stages], metavar="STAGE",
                   help="print what this stage of the compilation gives instead (dpia.pipeline, in order): "
                        + stage_help(stages))


def _show(args: argparse.Namespace) -> int:
    import dpia
    from functional.derivation import Derivation
    from functional.errors import FunctionalError

    from .explore.launch import describe as describe_launch
    from .pipeline import PIPELINE, Options
    from .programs import size_vars
    from .variants import needs_lowering

    loaded = _load_program(args, complete=False, inputs=False)
    device = _open_device(args.device) if args.device else None
    complete = all(v.name in loaded.sizes for v in size_vars(loaded.program))
    if (complete or args.stage == "build") and device is None:
        device = _open_device(None)
    with _warnings_to_stderr("show"):
        low, variant = _shown_variant(loaded, device, args.db, complete, needs_lowering(loaded.program))
    derivation = Derivation.from_text(variant["derivation"]) if variant["derivation"] else None
    last = args.stage or "emit"
    values = {"low": low, "derivation": derivation}
    try:
        if last != PIPELINE.names[0]:  # derive: the variant's (dpia.variants derives it)
            from codegen_opencl.runtime import session_for

            values["session"] = session_for(device) if last == "build" else None
            values = PIPELINE.run(values, Options(name=dpia.kernel_name_for(loaded.name), device=device,
                                                  launch=variant.get("launch") or {}), "translate", last)
    except FunctionalError as exc:
        raise CommandFailure(str(exc)) from None
    if args.stage is not None:
        return _print_stage(loaded, variant, PIPELINE[args.stage], values, args.json)
    imperative, source = values["imperative"], values["source"].text
    if args.json:
        print(json.dumps({"program": loaded.name, "sizes": loaded.sizes, **variant, "derivation": variant["derivation"],
                          "imperative": str(imperative), "opencl": source}, indent=1))
        return 0
    print(f"== {loaded.name}: {loaded.program}")
    print(f"== variant: {variant['variant']}" + (f" ({variant['note']})" if variant["note"] else ""))
    if variant.get("launch"):
        print(f"== launch: {describe_launch(variant['launch'])} for the kernels without work-groups")
    if derivation:
        print("== derivation\n" + str(derivation))
    print("== imperative program\n" + str(imperative))
    print("== OpenCL\n" + source)
    return 0


def _print_stage(loaded: _Loaded, variant: dict, stage, values: dict, as_json: bool) -> int:
    """What `stage` gave (each value it gives, as text)."""
    texts = {name: _stage_text(values[name]) for name in stage.gives}
    if as_json:
        print(json.dumps({"program": loaded.name, "sizes": loaded.sizes, **variant, "stage": stage.name, **texts},
                         indent=1))
        return 0
    print(f"== {loaded.name}: {loaded.program}")
    print(f"== variant: {variant['variant']}" + (f" ({variant['note']})" if variant["note"] else ""))
    print(f"== stage {stage.name}: {stage.doc}")
    for name, text in texts.items():
        print(f"== {name}\n{text}")
    return 0


def _stage_text(value) -> str:
    from codegen_opencl.runtime import Kernel, describe

    if value is None:  # a program as written has no derivation
        return "none"
    if isinstance(value, Kernel):
        names = ", ".join(ph.name for ph in value.phases)
        return (f"{len(value.phases)} kernel(s) built for {describe(value.device)} ({names}), "
                f"{value.index_type} indices, {len(value.source)} characters of OpenCL")
    return str(value)


def _shown_variant(loaded: _Loaded, device, db_path, complete: bool, high_level: bool):
    """(lowered program, description) of what `run` would execute."""
    from codegen_opencl.runtime import device_key
    from functional.errors import FunctionalError

    from .variants import choose_variant, default_variant, open_database

    if not high_level:
        return loaded.program, {"variant": "as written", "note": "already low level", "derivation": None,
                                "device": device_key(device) if device else None}
    try:
        if complete:
            with open_database(db_path) as db:
                from .explore.space import DeviceLimits

                low, v = choose_variant(loaded.program, loaded.sizes, device_key(device),
                                        db if db is not None else False, DeviceLimits.of(device))
        else:
            low, v = default_variant(loaded.program, loaded.sizes or None,
                                     "not every size given, so no tuned variant was looked up", _target(device))
    except FunctionalError as exc:
        raise CommandFailure(str(exc)) from None
    kind = {"tuned": "tuned (from the tuning database)", "preset": "preset (dpia.explore.presets)",
            "default": "default (functional.schedules.default_schedule)"}[v.kind]
    return low, {"variant": kind, "note": v.note, "derivation": v.derivation, "time_s": v.time_s,
                 "device": device_key(device) if device else None, "launch": v.launch}


# ------------------------------------------------------------------------------- db


def _db_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=["merge"], help="merge: add to TARGET every row of each SOURCE it lacks")
    p.add_argument("target", metavar="TARGET", help="the tuning database merged into (created if missing)")
    p.add_argument("sources", metavar="SOURCE", nargs="+", help="tuning databases from other hosts or runs")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")


def _db(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .explore.tuning import TuningDB, TuningError

    missing = [s for s in args.sources if not Path(s).expanduser().is_file()]
    if missing:
        raise UsageError(f"no tuning database at {', '.join(missing)}")
    merged = []
    try:
        with TuningDB(args.target) as target:
            for source in args.sources:
                added, present = target.merge(source)
                merged.append({"source": source, "added": added, "already_there": present})
            total = len(target.candidates())
    except TuningError as exc:
        raise CommandFailure(str(exc)) from None
    if args.json:
        print(json.dumps({"target": args.target, "merged": merged, "rows": total}, indent=1))
    else:
        for m in merged:
            print(f"{m['source']}: {m['added']} row(s) added, {m['already_there']} already in {args.target}")
        print(f"{args.target}: {total} row(s)")
    return 0


# ------------------------------------------------------------------------ the table

COMMANDS: list[Command] = [
    Command("rules", "list the rewrite rules; --check runs each against the interpreter", _rules_args, _rules),
    Command("devices", "list the OpenCL devices and their identities; * marks the default", _devices_args,
            _devices),
    Command("run", "run a program's best known variant (or the default) on random inputs; check and time it",
            _run_args, _run),
    Command("explore", "search a program's lowerings for the fastest on a device; store them in the tuning DB",
            _explore_args, _explore),
    Command("show", "print the variant a program runs: derivation, imperative program, OpenCL", _show_args, _show),
    Command("db", "the tuning database: `db merge TARGET SOURCE...` adds the rows TARGET lacks", _db_args, _db),
]


def build_parser() -> argparse.ArgumentParser:
    from .explore.tuning import VERSION

    parser = argparse.ArgumentParser(prog="dpia", description="Code generation via rewrite rules and DPIA.")
    parser.add_argument("--version", action="version", version=f"dpia {VERSION}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for c in COMMANDS:
        p = sub.add_parser(c.name, help=c.help, description=c.help)
        c.configure(p)
        p.set_defaults(run=c.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse printed the usage error (2) or the help (0)
        return exc.code if isinstance(exc.code, int) else 0
    try:
        return args.run(args)
    except UsageError as exc:
        print(f"dpia {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except CommandFailure as exc:
        print(f"dpia {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except MemoryError:  # what the size check could not foresee (the device's copies, ...)
        print(f"dpia {args.command}: error: out of memory; try smaller sizes", file=sys.stderr)
        return 1
    except BrokenPipeError:  # `dpia rules | head -1`: the reader has what it wanted
        _silence_stdout()
        return EXIT_BROKEN_PIPE


EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as a shell reports a pipeline's writer stopped by the reader


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that Python's final flush of what is still buffered for
    the closed pipe does not print another BrokenPipeError at exit."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real file descriptor (captured output): nothing is flushed to a pipe
        pass


if __name__ == "__main__":
    sys.exit(main())
