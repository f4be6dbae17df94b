"""The tuning database (dpia/tuning.py): keys, best(), file location, foreign files, concurrency."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from dpia.explore.tuning import ENV_VAR, VERSION, Candidate, CandidateError, TuningDB, TuningDBError, default_path

PROGRAM = "fun(N: nat, xs: N.f32) => map (fun(x) => x * 2.0) xs"
DEVICE = "Portable Computing Language | cpu | 5.0"
SIZES = {"N": 1024}
DERIVATION = ('program: fun(N: nat{multiple_of=4}, xs: N.f32) => map (fun(x) => x * 2.0) xs\n'
              'step: split_join {"n": "4"} 1.0\n')


def candidate(derivation: str = DERIVATION, status: str = "ok", time_s: float | None = 1.0, **fields) -> Candidate:
    fields = {"program": PROGRAM, "sizes": SIZES, "device": DEVICE, **fields}
    return Candidate(derivation=derivation, status=status, time_s=time_s, **fields)


@pytest.fixture
def db(tmp_path):
    with TuningDB(tmp_path / "tuning.sqlite") as opened:
        yield opened


def test_round_trip_keeps_every_field(db):
    stored = candidate(stage=None, params={"split": 4, "vector": [1, 2]}, run_id="run-1")
    failed = candidate(derivation="program: x\n", status="failed", time_s=None, stage="build",
                       error="error: use of undeclared identifier 'q'", run_id="run-1")
    db.add(stored)
    db.add(failed)
    assert db.candidates() == [stored, failed]
    assert db.candidates()[0].params == {"split": 4, "vector": [1, 2]}


def test_derivation_text_is_stored_verbatim(db):
    text = DERIVATION + "step: odd  'quotes' \"and\" ünïcode; DROP TABLE candidates; --\n\n"
    db.add(candidate(derivation=text))
    assert db.candidates()[0].derivation == text
    raw = sqlite3.connect(db.path).execute("SELECT derivation FROM candidates").fetchone()[0]
    assert raw == text


def test_best_picks_the_fastest_ok_candidate(db):
    db.add_many([candidate("a", time_s=3.0), candidate("b", time_s=1.5), candidate("c", time_s=2.0),
                 candidate("d", status="slow", time_s=0.1), candidate("e", status="wrong", time_s=0.2),
                 candidate("f", status="failed", time_s=None, stage="run")])
    assert db.best(PROGRAM, SIZES, DEVICE).derivation == "b"


def test_best_ranks_a_kernel_by_the_median_of_its_measurements(db):
    """A kernel measured once in a quiet moment (b, 1.0) and twice more as the machine is
    (4.0, 5.0) ranks by its median, 4.0: c, measured once at 2.0, is the best; a launch or
    compilation at the sizes makes another kernel of the same derivation."""
    db.add_many([candidate("b", time_s=1.0), candidate("c", time_s=2.0), candidate("b", time_s=4.0),
                 candidate("b", time_s=5.0), candidate("b", time_s=3.0, params={"launch": {"local": [64]}}),
                 candidate("b", status="wrong", time_s=0.1)])
    assert db.best(PROGRAM, SIZES, DEVICE).derivation == "c"
    db.add(candidate("b", time_s=1.5))
    db.add(candidate("b", time_s=1.0))  # b: 1.0, 4.0, 5.0, 1.5, 1.0 -> median 1.5
    best = db.best(PROGRAM, SIZES, DEVICE)
    assert best.derivation == "b" and best.time_s == 1.5 and best.params["measurements"] == [1.0, 4.0, 5.0, 1.5, 1.0]
    assert "launch" not in best.params
    assert db.seen(PROGRAM, SIZES, DEVICE, "b").time_s == 1.5  # an explorer reusing it sees the median
    assert db.seen(PROGRAM, SIZES, DEVICE, "b", launch={"local": [64]}).time_s == 3.0


def test_best_is_none_without_an_ok_candidate(db):
    db.add(candidate(status="timeout", time_s=None, stage="time"))
    assert db.best(PROGRAM, SIZES, DEVICE) is None


def test_version_device_and_sizes_are_separate_keys(db):
    db.add(candidate("mine", time_s=2.0))
    db.add(candidate("old version", time_s=0.1, version="0.0.1"))
    db.add(candidate("other device", time_s=0.1, device="NVIDIA | H200 | 550"))
    db.add(candidate("other sizes", time_s=0.1, sizes={"N": 2048}))
    db.add(candidate("other program", time_s=0.1, program=PROGRAM + " "))
    assert db.best(PROGRAM, SIZES, DEVICE).derivation == "mine"
    assert db.best(PROGRAM, SIZES, DEVICE, version="0.0.1").derivation == "old version"
    assert db.best(PROGRAM, SIZES, "NVIDIA | H200 | 550").derivation == "other device"
    assert db.best(PROGRAM, {"N": 2048}, DEVICE).derivation == "other sizes"


def test_sizes_key_ignores_insertion_order(db):
    db.add(candidate(sizes={"N": 4, "M": 8}))
    assert db.best(PROGRAM, {"M": 8, "N": 4}, DEVICE) is not None
    assert len(db.candidates(sizes={"M": 8, "N": 4})) == 1


def test_candidates_filters_by_each_field(db):
    db.add(candidate("a", run_id="r1"))
    db.add(candidate("b", run_id="r2", device="other"))
    assert [c.derivation for c in db.candidates(run_id="r1")] == ["a"]
    assert [c.derivation for c in db.candidates(device="other")] == ["b"]
    assert [c.derivation for c in db.candidates(program=PROGRAM, sizes=SIZES)] == ["a", "b"]
    assert db.candidates(program="something else") == []


def test_seen_finds_a_measured_derivation_for_the_current_version(db):
    assert db.seen(PROGRAM, SIZES, DEVICE, DERIVATION) is None
    db.add(candidate(status="failed", time_s=None, stage="emit", error="boom"))
    assert db.seen(PROGRAM, SIZES, DEVICE, DERIVATION).error == "boom"
    assert db.seen(PROGRAM, SIZES, "other device", DERIVATION) is None
    db.add(candidate("old", version="0.0.1"))
    assert db.seen(PROGRAM, SIZES, DEVICE, "old") is None


def test_summary_counts_statuses_and_stages_of_one_run(db):
    db.add_many([candidate("a", run_id="r"), candidate("b", run_id="r"),
                 candidate("c", status="failed", time_s=None, stage="build", run_id="r"),
                 candidate("d", status="wrong", time_s=None, stage="check", run_id="r"),
                 candidate("e", status="failed", time_s=None, stage="build", run_id="other")])
    assert db.summary("r") == {"run_id": "r", "total": 4, "status": {"ok": 2, "failed": 1, "wrong": 1},
                               "stage": {"build": 1, "check": 1}}


def test_candidate_defaults_and_validation():
    c = candidate()
    assert c.version == VERSION and c.created > 0 and c.params == {}
    with pytest.raises(CandidateError, match="status"):
        candidate(status="great")
    with pytest.raises(CandidateError, match="stage"):
        candidate(stage="compile")
    with pytest.raises(CandidateError, match="time_s"):
        candidate(time_s=None)
    with pytest.raises(CandidateError, match="sizes"):
        candidate(sizes={"N": 1.5})
    with pytest.raises(CandidateError, match="JSON"):
        candidate(params={"f": object()})


def test_the_file_is_in_wal_mode(db):
    db.add(candidate())
    assert sqlite3.connect(db.path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_each_add_is_committed_at_once(db):
    db.add(candidate())
    other = sqlite3.connect(db.path)  # another reader sees it without close()
    assert other.execute("SELECT count(*) FROM candidates").fetchone()[0] == 1


def test_environment_variable_and_explicit_path_choose_the_file(tmp_path, monkeypatch):
    from_env = tmp_path / "env" / "db.sqlite"
    monkeypatch.setenv(ENV_VAR, str(from_env))
    assert default_path() == from_env
    with TuningDB() as db:
        assert db.path == from_env
        db.add(candidate())
    explicit = tmp_path / "explicit.sqlite"
    with TuningDB(explicit) as db:
        assert db.path == explicit and db.candidates() == []
    assert from_env.exists() and explicit.exists()


def test_default_is_the_user_cache_folder(monkeypatch):
    import platformdirs

    monkeypatch.delenv(ENV_VAR, raising=False)
    assert default_path() == Path(platformdirs.user_cache_dir("dpia")) / "tuning.sqlite"


def test_a_foreign_file_is_refused_and_left_untouched(tmp_path):
    foreign = tmp_path / "notes.txt"
    foreign.write_text("my precious notes, not a database\n" * 50)
    before = foreign.read_bytes()
    with pytest.raises(TuningDBError, match="notes.txt"):
        TuningDB(foreign)
    assert foreign.read_bytes() == before


def test_another_applications_sqlite_file_is_refused(tmp_path):
    path = tmp_path / "other.sqlite"
    other = sqlite3.connect(path)
    other.execute("CREATE TABLE contacts (name TEXT)")
    other.commit()
    other.close()
    with pytest.raises(TuningDBError, match=r"other\.sqlite.*another application.*contacts"):
        TuningDB(path)
    assert sqlite3.connect(path).execute("SELECT name FROM sqlite_master").fetchall() == [("contacts",)]


def test_an_empty_file_is_refused_and_left_empty(tmp_path):
    empty = tmp_path / "tuning.sqlite"
    empty.touch()
    with pytest.raises(TuningDBError, match=r"tuning\.sqlite.*an empty file"):
        TuningDB(empty)
    assert empty.read_bytes() == b""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tuning.sqlite"]  # no -wal, no temporary left


def test_an_sqlite_file_without_tables_of_another_application_is_not_taken_over(tmp_path):
    path = tmp_path / "blank.sqlite"
    other = sqlite3.connect(path)
    other.execute("CREATE TABLE t (x)")
    other.execute("DROP TABLE t")  # a valid SQLite file, no tables, application_id 0
    other.commit()
    other.close()
    before = path.read_bytes()
    with pytest.raises(TuningDBError, match="another application"):
        TuningDB(path)
    assert path.read_bytes() == before


def test_a_new_file_is_created_complete_and_reopened(tmp_path):
    path = tmp_path / "sub" / "tuning.sqlite"
    with TuningDB(path) as db:
        db.add(candidate())
    assert sorted(p.name for p in path.parent.iterdir() if not p.name.endswith(("-wal", "-shm"))) == ["tuning.sqlite"]
    with TuningDB(path) as db:
        assert len(db.candidates()) == 1


def test_another_schema_version_is_refused(tmp_path):
    path = tmp_path / "tuning.sqlite"
    TuningDB(path).close()
    newer = sqlite3.connect(path)
    newer.execute("PRAGMA user_version = 99")
    newer.close()
    with pytest.raises(TuningDBError, match="schema version 99"):
        TuningDB(path)


def test_a_corrupt_file_is_refused(tmp_path):
    path = tmp_path / "tuning.sqlite"
    with TuningDB(path) as db:
        db.add(candidate())
    data = bytearray(path.read_bytes())
    data[100:] = b"\xff" * (len(data) - 100)  # keep the SQLite header, wreck the pages
    path.write_bytes(bytes(data))
    with pytest.raises(TuningDBError, match="tuning.sqlite"), TuningDB(path) as db:
        db.candidates()


def test_a_directory_is_refused(tmp_path):
    with pytest.raises(TuningDBError, match="directory"):
        TuningDB(tmp_path)


def test_a_closed_database_says_so(db):
    db.close()
    with pytest.raises(TuningDBError, match="closed"):
        db.add(candidate())


def _write_rows(path: str, writer: int, count: int) -> None:
    with TuningDB(path) as db:
        for k in range(count):
            db.add(candidate(f"writer {writer} row {k}", time_s=1.0 + k, run_id=f"w{writer}"))


def test_concurrent_processes_keep_every_row(tmp_path):
    path = str(tmp_path / "shared.sqlite")  # created by the writers themselves, at once
    writers, rows = 3, 40
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=_write_rows, args=(path, w, rows)) for w in range(writers)]
    for p in processes:
        p.start()
    for p in processes:
        p.join(timeout=120)
    assert [p.exitcode for p in processes] == [0] * writers
    with TuningDB(path) as db:
        stored = {c.derivation for c in db.candidates()}
    assert stored == {f"writer {w} row {k}" for w in range(writers) for k in range(rows)}
