"""The tuning database: every candidate kernel an exploration measured, kept across runs.

One SQLite file (WAL mode, so several explorer processes can write at once) holds one row per
measured candidate.  A row is keyed by the program's canonical text, the input sizes, the
device identity ("platform | device | driver version") and the dpia version, and stores the
candidate's derivation as replayable TEXT (never pickled, never evaluated), its status, the
stage that failed and why, its time and the search that produced it (`params`, with the
launch options it ran with, params["launch"], which a replay uses too):

    with TuningDB() as db:                       # --db PATH, else $DPIA_TUNING_DB, else the user cache
        db.add(Candidate(program, {"N": 1024}, device, derivation.to_text(), "ok", time_s=1.2e-4))
        fastest = db.best(program, {"N": 1024}, device)

Each `add` is its own transaction, so an interrupted exploration keeps what it measured.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import math
import os
import sqlite3
import statistics
import tempfile
import time
import types
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs

from functional.errors import FunctionalError

from ..pipeline import PIPELINE

FALLBACK_VERSION = "0.1.0"  # when dpia runs from a checkout that is not installed
ENV_VAR = "DPIA_TUNING_DB"
DEFAULT_FILE_NAME = "tuning.sqlite"
SCHEMA_VERSION = 1
APPLICATION_ID = 0x44504941  # "DPIA" in the SQLite header: tells our files from anyone else's
BUSY_TIMEOUT_S = 60.0  # how long a writer waits for another process's transaction

_MOVE_IT_AWAY = f"move it away or choose another file with --db or ${ENV_VAR}"

STATUSES = ("ok", "failed", "wrong", "timeout", "slow")
STAGES = PIPELINE.names  # where a candidate failed: a stage of dpia.pipeline


def _installed_version() -> str:
    try:
        return importlib.metadata.version("dpia")
    except importlib.metadata.PackageNotFoundError:
        return FALLBACK_VERSION


VERSION = _installed_version()


class TuningError(FunctionalError):
    """Base of the auto-tuning errors."""


class CandidateError(TuningError):
    """A candidate record with an invalid field (unknown status or stage, bad sizes, ...)."""


class TuningDBError(TuningError):
    """A tuning database file that cannot be used: foreign, corrupt, of another schema
    version, or locked for too long.  `where` is the file's path."""


# ---------------------------------------------------------------------------------------------
# The record


def _frozen_mapping(value: Mapping) -> Mapping:
    """A read-only copy, so a stored Candidate cannot change under the caller."""
    return types.MappingProxyType(dict(value))


def canonical_json(value: Mapping) -> str:
    """One text per mapping regardless of insertion order: the form keys are compared in."""
    return json.dumps(dict(value), sort_keys=True, separators=(",", ":"))


def _check_sizes(_inst, _attr, sizes: Mapping) -> None:
    for name, size in sizes.items():
        if not isinstance(name, str) or isinstance(size, bool) or not isinstance(size, int):
            raise CandidateError(f"sizes map names to ints, got {name!r}: {size!r}", where=f"sizes={dict(sizes)}")


def _check_status(_inst, _attr, status: str) -> None:
    if status not in STATUSES:
        raise CandidateError(f"status is one of {', '.join(STATUSES)}; got {status!r}")


def _check_stage(_inst, _attr, stage: str | None) -> None:
    if stage is not None and stage not in STAGES:
        raise CandidateError(f"stage is one of {', '.join(STAGES)} or None; got {stage!r}")


def _check_params(_inst, _attr, params: Mapping) -> None:
    try:
        canonical_json(params)
    except (TypeError, ValueError) as e:
        raise CandidateError(f"params must be JSON-serialisable: {e}", where=f"params={dict(params)!r}") from e


def _check_time(inst: Candidate, _attr, time_s: float | None) -> None:
    # best() ranks "ok" candidates by time, so each one needs a usable time
    if inst.status == "ok" and (time_s is None or not math.isfinite(time_s) or time_s <= 0):
        raise CandidateError(f"an 'ok' candidate needs a positive finite time_s, got {time_s!r}")


@attrs.frozen
class Candidate:
    """One measured candidate kernel.  `derivation` is `Derivation.to_text()`."""

    program: str
    sizes: Mapping[str, int] = attrs.field(converter=_frozen_mapping, validator=_check_sizes, hash=False)
    device: str
    derivation: str
    status: str = attrs.field(validator=_check_status)
    time_s: float | None = attrs.field(default=None, validator=_check_time)
    stage: str | None = attrs.field(default=None, validator=_check_stage)
    error: str | None = None
    params: Mapping[str, Any] = attrs.field(factory=dict, converter=_frozen_mapping, validator=_check_params,
                                            hash=False)
    run_id: str = ""
    version: str = VERSION
    created: float = attrs.field(factory=time.time)  # time.time() at measurement: the progress plot's x axis


# ---------------------------------------------------------------------------------------------
# The file


def default_path() -> Path:
    """$DPIA_TUNING_DB if set, else tuning.sqlite in the per-user cache folder."""
    from_env = os.environ.get(ENV_VAR)
    if from_env:
        return Path(from_env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("dpia")) / DEFAULT_FILE_NAME


_SCHEMA = """
CREATE TABLE candidates (
    id INTEGER PRIMARY KEY,
    program TEXT NOT NULL,
    program_hash TEXT NOT NULL,
    sizes TEXT NOT NULL,
    device TEXT NOT NULL,
    version TEXT NOT NULL,
    derivation TEXT NOT NULL,
    derivation_hash TEXT NOT NULL,
    status TEXT NOT NULL,
    stage TEXT,
    error TEXT,
    time_s REAL,
    params TEXT NOT NULL,
    run_id TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE INDEX candidates_by_key ON candidates (program_hash, sizes, device, version, status, time_s);
CREATE INDEX candidates_by_derivation ON candidates (program_hash, derivation_hash);
CREATE INDEX candidates_by_run ON candidates (run_id);
"""

_COLUMNS = ("program", "sizes", "device", "version", "derivation", "status", "stage", "error", "time_s",
            "params", "run_id", "created")


def _digest(text: str) -> str:
    # indexes hold short digests instead of whole program/derivation texts
    return hashlib.sha256(text.encode()).hexdigest()


class TuningDB:
    """The tuning database at `path` (None: $DPIA_TUNING_DB, else the per-user cache)."""

    def __init__(self, path: str | os.PathLike | None = None):
        self._path = Path(path).expanduser() if path is not None else default_path()
        self._connection = self._open()

    @property
    def path(self) -> Path:
        return self._path

    # -- opening ------------------------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        if self._path.is_dir():
            raise TuningDBError("is a directory, not a tuning database file", where=str(self._path))
        self._path.parent.mkdir(parents=True, exist_ok=True)
        if not self._path.exists():
            self._create()
        elif self._path.stat().st_size == 0:
            # SQLite would take an empty file for a new database and write our tables into it;
            # we only create files ourselves (see _create), so an empty one is someone else's
            raise TuningDBError(f"an empty file, not a dpia tuning database; refusing to write into it: "
                                f"{_MOVE_IT_AWAY}", where=str(self._path))
        with self._sqlite_errors("open"):
            # autocommit mode: transactions are the explicit BEGIN IMMEDIATE ... COMMIT below
            connection = sqlite3.connect(self._path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        try:
            with self._sqlite_errors("open"):
                self._check_file(connection)
        except BaseException:
            connection.close()
            raise
        return connection

    def _create(self) -> None:
        """A new database file at the path, complete before it appears there: the schema is
        written into a private temporary file, which is then hard-linked to the path (atomic,
        never replacing a file).  So a file at the path is either one we finished or someone
        else's, and processes creating the same file at once all end up using one of them."""
        handle, temporary = tempfile.mkstemp(prefix=f".{self._path.name}.", suffix=".new", dir=self._path.parent)
        os.close(handle)  # an empty file: SQLite makes it a new database
        try:
            with self._sqlite_errors("create"):
                connection = sqlite3.connect(temporary, isolation_level=None)
                try:
                    self._create_schema(connection)
                    # WAL lets readers and one writer work at once; persistent in the file once set
                    connection.execute("PRAGMA journal_mode = WAL")
                finally:
                    connection.close()  # checkpoints the WAL into the file
            try:
                os.link(temporary, self._path)
            except FileExistsError:
                pass  # another process created it first: that file is used
            except OSError:  # a file system without hard links: exclusive creation, then the bytes
                with contextlib.suppress(FileExistsError), open(self._path, "xb") as out:
                    out.write(Path(temporary).read_bytes())
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)

    def _check_file(self, connection: sqlite3.Connection) -> None:
        """Check an existing file is a current dpia tuning database; nothing is written to a
        file that is not."""
        application_id = connection.execute("PRAGMA application_id").fetchone()[0]
        user_version = connection.execute("PRAGMA user_version").fetchone()[0]
        tables = [r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        self._check_ours(application_id, user_version, tables)
        connection.execute("PRAGMA journal_mode = WAL")  # a no-op on our files (set at creation)
        connection.execute("PRAGMA synchronous = NORMAL")  # durable across crashes of the process in WAL

    @staticmethod
    def _create_schema(connection: sqlite3.Connection) -> None:
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                connection.execute(statement)
        connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _check_ours(self, application_id: int, user_version: int, tables: list[str]) -> None:
        where = str(self._path)
        advice = _MOVE_IT_AWAY
        if application_id != APPLICATION_ID:
            raise TuningDBError(f"an SQLite database of another application (tables: {', '.join(tables) or 'none'}), "
                                f"not a dpia tuning database; refusing to modify it: {advice}", where=where)
        if user_version != SCHEMA_VERSION:
            raise TuningDBError(f"a dpia tuning database of schema version {user_version}, this dpia reads version "
                                f"{SCHEMA_VERSION}: {advice}", where=where)
        if "candidates" not in tables:
            raise TuningDBError(f"a dpia tuning database without its 'candidates' table (corrupt?): {advice}",
                                where=where)

    @contextlib.contextmanager
    def _sqlite_errors(self, action: str) -> Iterator[None]:
        """SQLite's errors as TuningDBError naming the file: 'file is not a database',
        'database disk image is malformed', 'database is locked', ..."""
        try:
            yield
        except sqlite3.OperationalError as e:  # locked too long, unreadable folder, disk full, ...
            raise TuningDBError(f"cannot {action} the tuning database: {e}", where=str(self._path)) from e
        except sqlite3.DatabaseError as e:  # the file's content: not SQLite at all, or damaged
            raise TuningDBError(f"cannot {action} the tuning database: {e} (not a dpia tuning database, or "
                                f"corrupt; left untouched: {_MOVE_IT_AWAY})", where=str(self._path)) from e

    # -- writing ------------------------------------------------------------------------------

    def add(self, candidate: Candidate) -> None:
        """Store one candidate, committed at once."""
        self.add_many([candidate])

    def add_many(self, candidates: Iterable[Candidate]) -> None:
        """Store several candidates in one transaction (all or none)."""
        rows = [_row(c) for c in candidates]
        columns = _COLUMNS + ("program_hash", "derivation_hash")
        insert = f"INSERT INTO candidates ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
        with self._sqlite_errors("write to"):
            connection = self._live_connection()
            connection.execute("BEGIN IMMEDIATE")  # take the write lock now: waits on busy_timeout, no deadlock
            try:
                connection.executemany(insert, rows)
                connection.execute("COMMIT")
            except BaseException:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                raise

    def merge(self, other: str | os.PathLike) -> tuple[int, int]:
        """Add every row of the tuning database at `other` that this one lacks: (added, already
        here).  Rows are the same when every stored field is (program, sizes, device,
        version, derivation, status, stage, error, time, params, run, creation time), so
        merging the same file twice, or files that share rows, adds each row once; rows of
        another host (another device key) or another version are kept as they are.  One
        transaction: all of them or none."""
        source = TuningDB(other)  # refuses a file that is not a current dpia tuning database
        try:
            if source.path.resolve() == self._path.resolve():
                raise TuningDBError("cannot merge a tuning database into itself", where=str(self._path))
            source.close()
            return self._merge_from(source.path)
        finally:
            source.close()

    def _merge_from(self, path: Path) -> tuple[int, int]:
        stored = _COLUMNS + ("program_hash", "derivation_hash")
        same = " AND ".join(f"t.{c} IS s.{c}" for c in stored)
        listed = ", ".join(stored)
        with self._sqlite_errors("merge into"):
            connection = self._live_connection()
            connection.execute("ATTACH DATABASE ? AS source", (str(path),))
            try:
                connection.execute("BEGIN IMMEDIATE")
                try:
                    total = connection.execute(f"SELECT count(*) FROM (SELECT DISTINCT {listed} "
                                               f"FROM source.candidates)").fetchone()[0]
                    added = connection.execute(
                        f"INSERT INTO main.candidates ({listed}) SELECT DISTINCT {listed} FROM source.candidates s "
                        f"WHERE NOT EXISTS (SELECT 1 FROM main.candidates t WHERE {same}) ORDER BY s.id").rowcount
                    connection.execute("COMMIT")
                except BaseException:
                    if connection.in_transaction:
                        connection.execute("ROLLBACK")
                    raise
            finally:
                connection.execute("DETACH DATABASE source")
        return added, total - added

    # -- reading ------------------------------------------------------------------------------

    def best(self, program: str, sizes: Mapping[str, int], device: str, version: str | None = None
             ) -> Candidate | None:
        """The fastest 'ok' kernel for this key (a derivation, launched alike, compiled at the
        sizes or not: params["at_sizes"]) by the median of its measurements: an exploration
        measures its best and its baseline again before it keeps the best
        (dpia.explore.driver._confirm), so one quick run in a quiet moment does not outrank
        a kernel measured three times.  Its first candidate, with that median as `time_s`
        (and params["measurements"] where there are several); None if none succeeded yet."""
        rows = self._select(
            "program_hash = ? AND program = ? AND sizes = ? AND device = ? AND version = ? AND status = 'ok'",
            (_digest(program), program, canonical_json(sizes), device, version or VERSION), order="id ASC")
        groups: dict[tuple[str, str, bool], list[Candidate]] = {}
        for c in rows:
            groups.setdefault(kernel_key(c), []).append(c)
        if not groups:
            return None
        return min((summarised(group[0], group) for group in groups.values()),
                   key=lambda c: c.time_s)  # ties: the first stored

    def candidates(self, program: str | None = None, sizes: Mapping[str, int] | None = None,
                   device: str | None = None, run_id: str | None = None) -> list[Candidate]:
        """Every stored candidate matching the given fields (all versions), oldest first."""
        conditions, values = [], []
        if program is not None:
            conditions += ["program_hash = ?", "program = ?"]
            values += [_digest(program), program]
        for column, value in (("sizes", None if sizes is None else canonical_json(sizes)),
                              ("device", device), ("run_id", run_id)):
            if value is not None:
                conditions.append(f"{column} = ?")
                values.append(value)
        return self._select(" AND ".join(conditions) or "1", tuple(values), order="id ASC")

    def seen(self, program: str, sizes: Mapping[str, int], device: str, derivation: str,
             version: str | None = None, launch: Mapping | None = None) -> Candidate | None:
        """The latest measurement of this derivation, launched with `launch` (runtime.Kernel's
        options, the candidate's params["launch"]; None or empty: the default launch), for
        this key, so an explorer can skip it."""
        rows = self._select(
            "program_hash = ? AND derivation_hash = ? AND program = ? AND derivation = ? AND sizes = ? "
            "AND device = ? AND version = ?",
            (_digest(program), _digest(derivation), program, derivation, canonical_json(sizes), device,
             version or VERSION),
            order="id DESC")
        wanted = canonical_json(launch or {})
        alike = [c for c in rows if canonical_json(c.params.get("launch") or {}) == wanted]
        if not alike:
            return None
        return summarised(alike[0], [c for c in alike if c.status == "ok"]) if alike[0].status == "ok" else alike[0]

    def summary(self, run_id: str) -> dict:
        """{'run_id', 'total', 'status': {status: count}, 'stage': {stage: count}} of one run."""
        with self._sqlite_errors("read"):
            connection = self._live_connection()
            by_status = dict(connection.execute(
                "SELECT status, count(*) FROM candidates WHERE run_id = ? GROUP BY status ORDER BY status", (run_id,)))
            by_stage = dict(connection.execute(
                "SELECT stage, count(*) FROM candidates WHERE run_id = ? AND stage IS NOT NULL "
                "GROUP BY stage ORDER BY stage", (run_id,)))
        return {"run_id": run_id, "total": sum(by_status.values()), "status": by_status, "stage": by_stage}

    def _select(self, condition: str, values: tuple, order: str, limit: int | None = None) -> list[Candidate]:
        query = f"SELECT {', '.join(_COLUMNS)} FROM candidates WHERE {condition} ORDER BY {order}"
        if limit is not None:
            query += f" LIMIT {int(limit)}"
        with self._sqlite_errors("read"):
            rows = self._live_connection().execute(query, values).fetchall()
        return [self._candidate(row) for row in rows]

    def _candidate(self, row: tuple) -> Candidate:
        fields = dict(zip(_COLUMNS, row))
        try:
            fields["sizes"] = json.loads(fields["sizes"])
            fields["params"] = json.loads(fields["params"])
            return Candidate(**fields)
        except (ValueError, CandidateError) as e:
            raise TuningDBError(f"a stored candidate cannot be read back (corrupt row?): {e}",
                                where=str(self._path)) from e

    # -- lifetime -----------------------------------------------------------------------------

    def _live_connection(self) -> sqlite3.Connection:
        if self._connection is None:
            raise TuningDBError("the tuning database is closed", where=str(self._path))
        return self._connection

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def __enter__(self) -> TuningDB:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"TuningDB({str(self._path)!r})"


def kernel_key(c: Candidate) -> tuple[str, str, bool]:
    """What makes a measured kernel: its derivation, its launch, and whether it was compiled at
    the sizes (params["at_sizes"])."""
    return c.derivation, canonical_json(c.params.get("launch") or {}), bool(c.params.get("at_sizes"))


def summarised(candidate: Candidate, measurements: list[Candidate]) -> Candidate:
    """`candidate` timed as the median of the 'ok' `measurements` of its derivation and
    launch (params["measurements"] lists them where there are several)."""
    if len(measurements) < 2:
        return candidate
    return attrs.evolve(candidate, time_s=statistics.median(c.time_s for c in measurements),
                        params=dict(candidate.params, measurements=[c.time_s for c in measurements]))


def _row(c: Candidate) -> tuple:
    values = {
        "program": c.program, "sizes": canonical_json(c.sizes), "device": c.device, "version": c.version,
        "derivation": c.derivation, "status": c.status, "stage": c.stage, "error": c.error,
        "time_s": None if c.time_s is None else float(c.time_s), "params": canonical_json(c.params),
        "run_id": c.run_id, "created": float(c.created),
    }
    return tuple(values[k] for k in _COLUMNS) + (_digest(c.program), _digest(c.derivation))
