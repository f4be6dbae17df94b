"""Another device's best variant run here (`dpia.compile(..., tuned_for=key)`) and the
portability matrix built on it (benchmarks/portability.py): the source's kernel, never a
silent fallback, checked against the interpreter and timed against this device's own best."""

from __future__ import annotations

import sys
from pathlib import Path

import attrs
import numpy as np
import pytest

import dpia
from codegen_opencl.runtime import choose_device, device_key
from dpia.explore.space import with_size_facts
from dpia.explore.tuning import Candidate, TuningDB
from dpia.programs import canonical
from functional import schedules
from functional.derivation import derive
from functional.infer import infer
from functional.interp import interpret

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "examples"))
import portability  # noqa: E402
import seed  # noqa: E402

TOTAL = seed.total
SIZES = {"N": 1 << 14}
ELSEWHERE = "Elsewhere | a device tuned elsewhere | 1.0"
BROKEN = "Broken | a derivation that no longer replays | 1"
NOWHERE = "Nowhere | none | 0"


def _stored(db: TuningDB, device: str) -> Candidate:
    """A work-group tree reduction stored as `device`'s best (what an exploration there
    would store: a size-generic derivation with the facts it needs)."""
    _, derivation = derive(with_size_facts(infer(TOTAL), {"N": 256}), schedules.parallel_reduce(256, 64))
    candidate = Candidate(canonical(TOTAL), SIZES, device, derivation.to_text(), "ok", time_s=1e-4)
    db.add(candidate)
    return candidate


@pytest.fixture()
def db(tmp_path):
    with TuningDB(tmp_path / "tuning.sqlite") as opened:
        yield opened


def test_another_devices_best_variant_runs_here_and_computes_the_program(db):
    stored = _stored(db, ELSEWHERE)
    x = np.random.default_rng(0).standard_normal(SIZES["N"]).astype(np.float32)
    kernel = dpia.compile(TOTAL, db=db, tuned_for=ELSEWHERE)
    got = kernel(x)
    assert kernel.variant.kind == "tuned" and kernel.variant.derivation == stored.derivation
    assert np.allclose(got, interpret(TOTAL, x), rtol=1e-4)
    assert "tuned for Elsewhere" in repr(kernel)
    own = dpia.compile(TOTAL, db=db)  # this device has no row: its own preset or default
    own(x)
    assert own.variant.kind != "tuned"
    unknown = dpia.compile(TOTAL, db=db, tuned_for=NOWHERE)
    unknown(x)
    assert unknown.variant.kind != "tuned" and NOWHERE in unknown.variant.note


def test_the_matrix_times_each_sources_kernel_against_this_devices_own_and_says_why_one_did_not_run(db):
    here = device_key(choose_device(None))
    _stored(db, here)
    _stored(db, ELSEWHERE)
    broken = _stored(db, BROKEN)
    db.add(attrs.evolve(broken, derivation=broken.derivation.replace("reduce", "no_such_rule"), time_s=1e-5))
    x = np.random.default_rng(1).standard_normal(SIZES["N"]).astype(np.float32)
    sources = [here, ELSEWHERE, BROKEN, NOWHERE]
    rows = portability.cross_run(TOTAL, (x,), lambda v: np.sum(v.astype(np.float64)), [None], sources, db, 2)
    by_source = {r["source"]: r for r in rows}
    assert [r["destination"] for r in rows] == [here] * 4
    for source in (here, ELSEWHERE):
        row = by_source[source]
        assert row["status"] == "ok" and row["kind"] == "tuned" and row["own_kind"] == "tuned"
        assert row["relative_error"] < 1e-4 and row["over_own"] > 0
    assert by_source[BROKEN]["status"] == "not tuned" and "the stored variant" in by_source[BROKEN]["why"]
    assert by_source[NOWHERE]["status"] == "not tuned"
    assert NOWHERE in by_source[NOWHERE]["why"]
    table = portability.markdown([("total:n=16384", rows)])
    assert table.count("\n") == 2 + len(rows) and "not tuned" in table
    # a device key ("platform | device | version") stays one cell: every row has the header's columns
    assert {line.count("|") for line in table.splitlines()} == {8}
