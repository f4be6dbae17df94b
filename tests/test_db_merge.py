"""Merging tuning databases from separate hosts (TuningDB.merge, `dpia db merge`): no row lost,
none duplicated, however often or in whichever order the files are merged."""

from __future__ import annotations

import json
import sqlite3

import pytest

from dpia.cli import main
from dpia.explore.tuning import Candidate, TuningDB, TuningDBError

PROGRAM = "fun(N: nat, x0: N.f32) => reduce (+) 0.0 x0"


def _candidate(device: str, derivation: str, status: str = "ok", run_id: str = "r", **fields) -> Candidate:
    time_s = fields.pop("time_s", 1e-3 if status == "ok" else None)
    return Candidate(PROGRAM, {"N": 1024}, device, derivation, status, time_s=time_s, run_id=run_id, **fields)


@pytest.fixture
def two_hosts(tmp_path):
    """Host A measured on a GPU, host B on a CPU; both hold a row copied from a shared run."""
    shared = _candidate("shared | dev | 1", "d0", run_id="shared")
    a = [shared, _candidate("gpu | H200 | 1", "d1"), _candidate("gpu | H200 | 1", "d2", "failed", stage="derive",
                                                                 error="no")]
    b = [shared, _candidate("cpu | PoCL | 3", "d1"), _candidate("cpu | PoCL | 3", "d3", "slow", time_s=2.0)]
    paths = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    for path, rows in zip(paths, (a, b)):
        with TuningDB(path) as db:
            db.add_many(rows)
    return paths, a, b


def _rows(path) -> list[tuple]:
    with TuningDB(path) as db:
        return sorted((c.device, c.derivation, c.status, c.run_id, c.created, c.time_s) for c in db.candidates())


def test_merge_keeps_every_row_once(two_hosts):
    (a_path, b_path), _, _ = two_hosts
    before_a, before_b = _rows(a_path), _rows(b_path)
    with TuningDB(a_path) as db:
        assert db.merge(b_path) == (2, 1)  # the shared row is there already
        assert db.merge(b_path) == (0, 3)  # again: nothing new
    merged = _rows(a_path)
    assert merged == sorted(set(before_a) | set(before_b)) and len(merged) == 5
    assert _rows(b_path) == before_b  # the source is not changed
    with TuningDB(b_path) as db:  # the other way round gives the same rows
        db.merge(a_path)
    assert _rows(b_path) == merged


def test_merged_rows_answer_queries_as_on_their_host(two_hosts):
    (a_path, b_path), _, b = two_hosts
    with TuningDB(a_path) as db:
        db.merge(b_path)
        best = db.best(PROGRAM, {"N": 1024}, "cpu | PoCL | 3")
        seen = db.seen(PROGRAM, {"N": 1024}, "cpu | PoCL | 3", "d3")
    assert best == b[1] and seen == b[2]


def test_merge_refuses_a_file_that_is_not_a_tuning_database_and_changes_nothing(two_hosts, tmp_path):
    (a_path, _), _, _ = two_hosts
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE candidates (x)")
    before = _rows(a_path)
    with TuningDB(a_path) as db:
        with pytest.raises(TuningDBError, match="another application"):
            db.merge(other)
        with pytest.raises(TuningDBError, match="into itself"):
            db.merge(a_path)
    assert _rows(a_path) == before


def test_dpia_db_merge(two_hosts, tmp_path, capsys):
    (a_path, b_path), _, _ = two_hosts
    target = tmp_path / "all.sqlite"
    assert main(["db", "merge", str(target), str(a_path), str(b_path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [(m["added"], m["already_there"]) for m in report["merged"]] == [(3, 0), (2, 1)] and report["rows"] == 5
    assert main(["db", "merge", str(target), str(b_path)]) == 0
    assert f"0 row(s) added, 3 already in {target}" in capsys.readouterr().out
    assert main(["db", "merge", str(target), str(tmp_path / "missing.sqlite")]) == 2
    assert "no tuning database at" in capsys.readouterr().err
