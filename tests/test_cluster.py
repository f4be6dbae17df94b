"""Exploration on Ray (dpia.explore.cluster), on one machine: one local cluster shared by the
module (three logical CPUs, no dashboard), two measuring actors sharing the PoCL device, an
Oclgrind device, a preparation worker killed mid-candidate, Ctrl-C, a sweep, the CLI."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import attrs
import pytest

import functional as fl
from dpia.cli import main
from dpia.explore import Evaluator, explore
from dpia.explore.cluster import Cluster, ClusterError
from dpia.explore.space import Skeleton, Step
from dpia.explore.sweep import sweep, sweep_entries
from dpia.explore.tuning import TuningDB

N = fl.nat("N")
TOTAL = fl.fun([fl.array(N, fl.f32)], lambda xs: fl.reduce(fl.add, 0.0, xs))
SIZES = {"N": 1 << 18}  # above the Oclgrind replay's limit at the real sizes: only the checks are replayed
SEED = Path(__file__).resolve().parent.parent / "examples" / "seed.py"


def _global_chunks(slot_values: tuple[int, ...]) -> Skeleton:
    """reduce -> map (reduce) (split n xs), the partial sums one work-item each."""
    return Skeleton((Step("reduce_split", (), (), (("n", "s0"),)), Step("lower_map_global", (1,), (("d", 0),))),
                    {"s0": slot_values})


CHUNKS = _global_chunks((256, 512, 1024))
VICTIM = Skeleton((Step("reduce_split", (), (), (("n", "s0"),)), Step("lower_map_global", (1,), (("d", 0),)),
                   Step("lower_map_global", (1,), (("d", 0),))), {"s0": (2048,)})  # its worker is killed
QUICK = Evaluator(repeat=3, min_timed_s=0.0, max_timed_s=0.3)  # Oclgrind simulates: keep timings short


@attrs.frozen
class KilledWhileDeriving(Evaluator):
    """Deriving VICTIM's candidate writes the worker's pid to `pid_file` and waits to be killed."""

    pid_file: str = ""

    def derive(self, spec):
        if spec.family_name == VICTIM.name:
            Path(self.pid_file).write_text(str(os.getpid()))
            time.sleep(120)
        return super().derive(spec)


@pytest.fixture(scope="module")
def cluster():
    with Cluster.connect("local", num_cpus=3, actors_per_device=2) as c:
        yield c


def test_candidates_are_prepared_on_workers_and_measured_by_every_device_actor(cluster, tmp_path):
    with TuningDB(tmp_path / "t.sqlite") as db:
        result = explore(TOTAL, SIZES, db=db, executor=cluster, workers=2, seed=0, skeletons=[CHUNKS],
                         baseline="default", evaluator=QUICK)
        stored = db.candidates(run_id=result.run_id)
    assert result.tried == 4 == len(stored) and result.failed == 0 and not result.lost, result.report()
    assert result.best is not None and result.best.status == "ok"
    where = [c.params["where"] for c in stored]
    assert all("prepared on" in w and "measured on" in w for w in where), where
    measured_by = {w.split("measured on ")[1] for w in where}
    assert len(measured_by) == 2, where  # both actors of the PoCL device took candidates
    stages = result.stage_seconds()
    assert {"derive", "translate", "emit", "build", "queue", "time"} <= set(stages), stages


def test_a_killed_preparation_worker_loses_only_its_candidate(cluster, tmp_path):
    pid_file = tmp_path / "victim.pid"

    def kill_the_victim():
        deadline = time.monotonic() + 120
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        if pid_file.exists():
            os.kill(int(pid_file.read_text()), signal.SIGKILL)

    killer = threading.Thread(target=kill_the_victim, daemon=True)
    killer.start()
    with TuningDB(tmp_path / "t.sqlite") as db:
        result = explore(TOTAL, SIZES, db=db, executor=cluster, workers=2, seed=0, skeletons=[VICTIM, CHUNKS],
                         baseline="default", evaluator=KilledWhileDeriving(repeat=3, min_timed_s=0.0, max_timed_s=0.3,
                                                                          pid_file=str(pid_file)),
                         timeout_s=60)
        stored = db.candidates(run_id=result.run_id)
    killer.join(5)
    assert len(result.lost) == 1 and VICTIM.name in result.lost[0] and "died" in result.lost[0], result.report()
    assert "lost 1 in-flight candidate(s)" in result.report()
    families = [c.params["family"] for c in stored]
    assert VICTIM.name not in families  # not stored: a later run measures it
    assert families.count(CHUNKS.name) == 3 and all(c.status == "ok" for c in stored), families


def test_ctrl_c_keeps_every_measured_candidate(cluster, tmp_path):
    seen = []

    def interrupt_at_the_second(candidate):
        seen.append(candidate)
        if len(seen) == 2:
            raise KeyboardInterrupt

    with TuningDB(tmp_path / "t.sqlite") as db:
        with pytest.raises(KeyboardInterrupt):
            explore(TOTAL, SIZES, db=db, executor=cluster, workers=2, seed=0, skeletons=[CHUNKS],
                    baseline="default", evaluator=QUICK, progress=interrupt_at_the_second)
        stored = db.candidates()
    assert [c.derivation for c in stored] == [c.derivation for c in seen]  # each written before it was reported
    import ray

    deadline = time.monotonic() + 30  # the interrupted run's actors are killed: their CPUs come back
    while ray.available_resources().get("CPU", 0) < ray.cluster_resources()["CPU"] and time.monotonic() < deadline:
        time.sleep(0.2)
    assert ray.available_resources().get("CPU", 0) == ray.cluster_resources()["CPU"]


def test_a_sweep_over_devices_keys_each_separately(cluster, tmp_path):
    path = tmp_path / "t.sqlite"
    entries = sweep_entries({"total": TOTAL}, [{"N": 4096}], ["Portable Computing Language", "Oclgrind"])
    results = sweep(entries, db=path, executor=cluster, workers=1, max_candidates=2, seed=0,
                    skeletons=[_global_chunks((256,))], baseline="default", evaluator=QUICK)
    assert [r.device.split(" | ")[0] for r in results] == ["Portable Computing Language", "Oclgrind"]
    with TuningDB(path) as db:
        for r in results:
            rows = db.candidates(device=r.device)
            assert len(rows) == r.tried == 2 and all(c.status in ("ok", "slow") for c in rows), r.report()


def test_cli_explores_a_sweep_of_sizes_on_the_cluster(cluster, tmp_path, capsys):
    path = tmp_path / "t.sqlite"
    code = main(["explore", f"{SEED}:total", "--size", "N=2^12,2^13", "--candidates", "2", "--workers", "1",
                 "--cluster", "auto", "--db", str(path), "--json"])
    out = capsys.readouterr().out
    assert code == 0, out
    reports = json.loads(out)
    assert [r["sizes"] for r in reports] == [{"N": 4096}, {"N": 8192}]
    with TuningDB(path) as db:
        for size in (4096, 8192):
            rows = db.candidates(sizes={"N": size})
            assert rows and all("measured on" in c.params.get("where", "") for c in rows if c.status == "ok")


def test_an_unreachable_cluster_is_a_typed_error(monkeypatch):
    import ray

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", lambda **_: (_ for _ in ()).throw(ConnectionError("no cluster found")))
    with pytest.raises(ClusterError, match="cannot reach the Ray cluster at 'auto'"):
        Cluster.connect("auto")
