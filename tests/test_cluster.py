"""Exploration on Ray (dpia.explore.cluster), on one machine: one cluster shared by the module
(a head node of three logical CPUs, no dashboard, joined by its address), two measuring
actors sharing the PoCL device, an Oclgrind device, actors kept for the next exploration
(one killed while kept), a preparation worker killed mid-candidate, actors that die or fail while starting, a second node removed
mid-exploration, Ctrl-C, a sweep, the CLI (on a driver that opens no device)."""

from __future__ import annotations

import contextlib
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
from dpia.explore.cluster import Cluster, ClusterError, ClusterWarning
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


def searched(rows):
    """The rows of the search's candidates, without the best's and the baseline's measurements
    again (dpia.explore.driver._confirm: whether there are any depends on which was faster)."""
    return [c for c in rows if "confirms" not in c.params]


VICTIM = Skeleton((Step("reduce_split", (), (), (("n", "s0"),)), Step("lower_map_global", (1,), (("d", 0),)),
                   Step("lower_map_global", (1,), (("d", 0),))), {"s0": (2048,)})  # its worker is killed
QUICK = Evaluator(repeat=3, min_timed_s=0.0, max_timed_s=0.3)  # Oclgrind simulates: keep timings short


TIMED_VICTIM = Skeleton((Step("reduce_vectorize_two_stage", (), (), (("n", "s0"), ("w", "s1"))),
                         Step("lower_map_global", (1,), (("d", 0),))), {"s0": (1024,), "s1": (4,)})


@attrs.frozen
class KilledMidCandidate(Evaluator):
    """Deriving VICTIM's candidate (in a preparation worker), or timing TIMED_VICTIM's (in a
    measuring actor), writes the process's pid to `pid_file` and waits to be killed."""

    pid_file: str = ""

    def _wait_to_be_killed(self):
        Path(self.pid_file).write_text(str(os.getpid()))
        time.sleep(120)

    def derive(self, spec):
        if spec.family_name == VICTIM.name:
            self._wait_to_be_killed()
        return super().derive(spec)

    def time(self, kernel, inputs, best_s, spec):
        if spec.family_name == TIMED_VICTIM.name:
            self._wait_to_be_killed()
        return super().time(kernel, inputs, best_s, spec)


def _kill_when_written(pid_file: Path) -> threading.Thread:
    """SIGKILL the process whose pid appears in `pid_file` (from another thread)."""
    def kill():
        deadline = time.monotonic() + 120
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        if pid_file.exists():
            os.kill(int(pid_file.read_text()), signal.SIGKILL)

    killer = threading.Thread(target=kill, daemon=True)
    killer.start()
    return killer


def _processes_with(marker: str) -> list[int]:
    """The live processes whose environment holds `marker` (a process and all it started)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                environ = (entry / "environ").read_bytes()
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:  # gone meanwhile, or not ours to read
                continue
            if marker.encode() in environ and state != "Z":
                found.append(int(entry.name))
    return found


def test_cli_ctrl_c_on_a_local_cluster_keeps_the_measured_rows_and_leaves_no_ray_process(tmp_path):
    """`dpia explore --cluster local` in a process of its own (before this module's cluster
    starts: two would share the CPUs), interrupted after its first measured rows."""
    import sqlite3
    import subprocess
    import sys
    import uuid

    path, marker = tmp_path / "t.sqlite", f"DPIA_TEST_RUN={uuid.uuid4().hex}"
    env = {**os.environ, "DPIA_TEST_RUN": marker.split("=")[1]}
    process = subprocess.Popen([sys.executable, "-m", "dpia.cli", "explore", f"{SEED}:scal", "--size", "N=2^12",
                                "--budget", "300", "--workers", "1", "--cluster", "local", "--db", str(path)],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        rows, deadline = 0, time.monotonic() + 240
        while rows < 1 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.5)
            if path.exists():
                with contextlib.closing(sqlite3.connect(path, timeout=10)) as db:
                    try:
                        rows = db.execute("SELECT COUNT(*) FROM candidates").fetchone()[0]
                    except sqlite3.OperationalError:  # the table is not there yet
                        rows = 0
        assert rows >= 1 and process.poll() is None, process.communicate(timeout=30)
        assert len(_processes_with(marker)) > 3  # the marker finds Ray's processes: the driver's GCS, raylet, actors
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, err[-3000:]
    assert "interrupted; the candidates measured so far are in" in err
    with TuningDB(path) as db:
        kept = db.candidates()
    # none lost or spoilt by the interruption: measured, or refused by the resource filter before any run
    # (a launch shape of fewer work-groups than compute units)
    assert len(kept) >= rows and all(c.status in ("ok", "slow") or c.stage == "resources" for c in kept), \
        [(c.status, c.stage) for c in kept]
    deadline = time.monotonic() + 20  # Ray's processes exit as the driver shuts the cluster down
    while _processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _processes_with(marker) == []


@pytest.fixture(scope="module")
def head():
    """A Ray cluster on this machine whose nodes tests add and remove (ray.cluster_utils)."""
    from ray.cluster_utils import Cluster as RayNodes

    nodes = RayNodes(initialize_head=True, head_node_args={"num_cpus": 3, "include_dashboard": False})
    yield nodes
    nodes.shutdown()


@pytest.fixture(scope="module")
def cluster(head):
    with Cluster.connect(head.address, actors_per_device=2) as c:
        yield c


def test_a_local_cluster_is_a_new_one_while_another_runs_on_the_machine(head):
    """`--cluster local` starts its own cluster: with no address, Ray would join the last one
    `ray start` left on this machine and refuse the CPU count asked for."""
    import subprocess
    import sys

    probe = ("from dpia.explore.cluster import Cluster\n"
             "with Cluster.connect('local', worker_cpus=1) as c:\n"
             "    import ray; print('cpus', ray.cluster_resources().get('CPU'))\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "cpus 2.0" in done.stdout, done.stderr[-2000:]


def test_candidates_are_prepared_on_workers_and_measured_by_every_device_actor(cluster, tmp_path):
    with TuningDB(tmp_path / "t.sqlite") as db:
        result = explore(TOTAL, SIZES, db=db, executor=cluster, workers=2, seed=0, skeletons=[CHUNKS],
                         baseline="default", evaluator=QUICK)
        stored = searched(db.candidates(run_id=result.run_id))
    assert result.tried == 4 == len(stored) and result.failed == 0 and not result.lost, result.report()
    assert result.best is not None and result.best.status == "ok"
    where = [c.params["where"] for c in stored]
    assert all("prepared on" in w and "measured on" in w for w in where), where
    measured_by = {w.split("measured on ")[1] for w in where}
    assert len(measured_by) == 2, where  # both actors of the PoCL device took candidates
    stages = result.stage_seconds()
    assert {"derive", "translate", "emit", "build", "queue", "time"} <= set(stages), stages


def test_a_cluster_keeps_its_actors_for_the_next_exploration_and_starts_again_one_that_died_meanwhile(cluster,
                                                                                                     tmp_path):
    def explored(run: int) -> dict[str, list[int]]:
        with TuningDB(tmp_path / f"{run}.sqlite") as db:
            result = explore(TOTAL, {"N": 4096}, db=db, executor=cluster, workers=1, seed=0, max_candidates=1,
                             skeletons=[_global_chunks((256,))], baseline="default", evaluator=QUICK)
        assert result.tried == 1 and result.failed == 0 and not result.lost and not result.dropped, result.report()
        return cluster.kept_pids()

    first = explored(0)
    assert len(first["preparation worker"]) == 1 and len(first["measuring actor"]) == 2, first
    assert explored(1) == first  # the same processes prepared and measured again
    dead, alive = first["measuring actor"]
    os.kill(dead, signal.SIGKILL)  # one dies while kept: started again (not dropped, explored() checks)
    third = explored(2)
    assert third["preparation worker"] == first["preparation worker"], (first, third)
    assert alive in third["measuring actor"] and dead not in third["measuring actor"], (first, third)


def test_a_program_built_by_a_worker_runs_from_its_binary_in_another_session_without_compiling():
    import numpy as np
    import pyopencl as cl

    from codegen_opencl.runtime import Session, choose_device

    source = "__kernel void twice(__global float* x) { size_t i = get_global_id(0); x[i] = 2.0f * x[i] + 1.0f; }"
    device = choose_device(POCL)
    worker, actor = Session(device), Session(device)  # two contexts, as in two processes
    worker.build(source)
    assert actor.adopt(source, worker.binary(source)) and actor.builds == 0
    assert not actor.adopt(source + " ", b"not a binary")  # refused: then built from the source
    outputs = []
    for session in (worker, actor):
        data = np.arange(64, dtype=np.float32)
        buffer = cl.Buffer(session.context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=data)
        session.build(source).twice(session.queue, data.shape, None, buffer)
        cl.enqueue_copy(session.queue, data, buffer)
        outputs.append(data)
    assert actor.builds == 0 and np.array_equal(outputs[0], outputs[1])


def test_measuring_actors_load_the_workers_binaries_and_measure_the_same_as_from_source(cluster, tmp_path,
                                                                                       monkeypatch):
    from dpia.explore.cluster import BUILT_FROM_BINARY

    runs = {}
    for ship in (True, False):
        monkeypatch.setattr(cluster, "ship_binaries", ship)
        with TuningDB(tmp_path / f"{ship}.sqlite") as db:
            result = explore(TOTAL, {"N": 4096}, db=db, executor=cluster, workers=1, seed=0,
                             skeletons=[_global_chunks((256,))], baseline="default", evaluator=QUICK)
            runs[ship] = sorted((c.derivation, c.status, c.params["where"].endswith(BUILT_FROM_BINARY))
                                for c in searched(db.candidates(run_id=result.run_id)))
    assert [d for d, _, _ in runs[True]] == [d for d, _, _ in runs[False]] and len(runs[True]) == 2
    assert all(status in ("ok", "slow") for ship in runs for _, status, _ in runs[ship])  # checked: equal results
    assert all(binary for _, _, binary in runs[True]) and not any(binary for _, _, binary in runs[False])


@attrs.frozen
class FailsWhileStarting(KilledMidCandidate):
    """Breaks the start of actors: unpickled as the constructor's argument of an actor of a
    class in `victims` (the task Ray runs to construct it: "_Preparer.__init__"), it kills
    that process (`how` "kill": only the first actor of each class, the one that claims
    its token file in `tokens`) or raises, as a device that cannot be opened would
    (`how` "raise": every actor of the class); kills the process of VICTIM's candidate as
    KilledMidCandidate does."""

    victims: tuple[str, ...] = ()
    how: str = "kill"
    tokens: str = ""

    def __reduce__(self):
        fields = {a.alias: getattr(self, a.name) for a in attrs.fields(type(self)) if a.init}
        return (_arrives_in_an_actor, (type(self), fields))


def _arrives_in_an_actor(cls, fields: dict) -> FailsWhileStarting:
    import ray

    task = ray.get_runtime_context().get_task_name() if ray.is_initialized() else None
    victim = next((v for v in fields["victims"] if task == f"{v}.__init__"), None)
    if victim is not None and fields["how"] == "raise":
        raise RuntimeError(f"injected: {victim} cannot open its device")
    if victim is not None:
        try:  # the first of its class claims the token: it dies, the others start
            os.close(os.open(Path(fields["tokens"]) / victim, os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            pass
        else:
            os.kill(os.getpid(), signal.SIGKILL)
    return cls(**fields)


def test_an_exploration_none_of_whose_measuring_actors_or_workers_can_start_is_a_cluster_error_saying_where_and_why(
        cluster):
    import ray

    evaluator = FailsWhileStarting(repeat=3, min_timed_s=0.0, max_timed_s=0.3, victims=("_Measurer",), how="raise")
    node = ray.get_runtime_context().get_node_id()  # the head's, where both actors of the PoCL device run
    with pytest.warns(ClusterWarning, match="its constructor raised RuntimeError: injected"), \
            pytest.raises(ClusterError, match="no measuring actor for the device .* could start") as raised:
        explore(TOTAL, {"N": 4096}, device=POCL, executor=cluster, workers=1, max_candidates=1,
                skeletons=[_global_chunks((256,))], baseline="default", evaluator=evaluator)
    message = str(raised.value)
    assert message.count(f"a measuring actor of {POCL}") == 2 and message.count(f"on node {node[:8]}") == 2, message
    assert message.count("died while starting: its constructor raised RuntimeError: injected: _Measurer cannot "
                         "open its device") == 2, message
    no_worker = attrs.evolve(evaluator, victims=("_Preparer",))
    with pytest.raises(ClusterError, match="no preparation worker for the device .* could start: a preparation "
                                           "worker died while starting: its constructor raised RuntimeError: "
                                           "injected: _Preparer cannot open its device"):
        explore(TOTAL, {"N": 4096}, device=POCL, executor=cluster, workers=1, max_candidates=1,
                skeletons=[_global_chunks((256,))], baseline="default", evaluator=no_worker)


def _exits(*_):
    os._exit(3)


def test_a_node_whose_probe_dies_answers_why_and_a_function_run_on_the_device_raises_here(cluster):
    import ray

    from codegen_opencl.runtime import identity_key
    from dpia.cli import CommandFailure
    from dpia.explore.cluster import _ask_every_node

    node = ray.get_runtime_context().get_node_id()
    [(asked, answer)] = _ask_every_node(ray, _exits)  # the module's cluster has one node
    assert asked == node and answer.startswith(f"node {node[:8]} did not answer: "), answer
    key = identity_key(cluster.identity(POCL))
    assert cluster.run_on_device(key, lambda device, n: (device.name.strip(), n), 7) == (
        cluster.identity(POCL)["device"], 7)
    with pytest.raises(CommandFailure, match="raised on the node"):
        cluster.run_on_device(key, _fails_with_a_command_failure)
    with pytest.raises(ClusterError, match="no node of the cluster has the device 'no such key'"):
        cluster.run_on_device("no such key", _fails_with_a_command_failure)


def _fails_with_a_command_failure(device):
    from dpia.cli import CommandFailure

    raise CommandFailure("raised on the node")


def test_a_killed_preparation_worker_loses_only_its_candidate_and_actors_killed_while_starting_are_dropped(
        cluster, tmp_path):
    """One exploration, three faults: of its two preparation workers and two measuring actors,
    one of each dies while starting (dropped: the run goes on with the others), then the
    worker left is killed while deriving VICTIM's candidate (lost; the worker replaced)."""
    pid_file, tokens = tmp_path / "victim.pid", tmp_path / "tokens"
    tokens.mkdir()
    killer = _kill_when_written(pid_file)
    evaluator = FailsWhileStarting(repeat=3, min_timed_s=0.0, max_timed_s=0.3, pid_file=str(pid_file),
                                   victims=("_Preparer", "_Measurer"), tokens=str(tokens))
    with TuningDB(tmp_path / "t.sqlite") as db, pytest.warns(ClusterWarning, match="died while starting") as caught:
        result = explore(TOTAL, SIZES, db=db, executor=cluster, workers=2, seed=0, skeletons=[VICTIM, CHUNKS],
                         baseline="default", evaluator=evaluator, timeout_s=60)
        stored = searched(db.candidates(run_id=result.run_id))
    killer.join(5)
    assert pid_file.exists()  # the victim's process was reached (and killed)
    families = [c.params["family"] for c in stored]
    assert VICTIM.name not in families  # not stored: a later run measures it
    assert families.count(CHUNKS.name) == 3 and all(c.status in ("ok", "slow") for c in stored), families
    assert len(result.lost) == 1 and VICTIM.name in result.lost[0], result.report()
    assert "preparation worker" in result.lost[0] and "died during derive" in result.lost[0]
    assert "lost 1 in-flight candidate(s)" in result.report()

    assert sorted(p.name for p in tokens.iterdir()) == ["_Measurer", "_Preparer"]  # one of each was killed starting
    dropped = sorted(result.dropped)
    assert len(dropped) == 2 and all("died while starting" in d for d in dropped), dropped
    assert dropped[0].startswith(f"a measuring actor of {POCL}") and " on node " in dropped[0], dropped
    assert dropped[1].startswith("a preparation worker died while starting: The actor died unexpectedly"), dropped
    assert "went on without 2 worker(s)" in result.report()
    assert len({c.params["where"].split("measured on ")[1] for c in stored}) == 1  # the one actor left measured
    assert any("going on with 1 other(s)" in str(w.message) for w in caught)


@attrs.frozen
class HangsOnTheDoomedNode(Evaluator):
    """Timing a candidate on the node `doomed` writes `marker` and waits (for the node to go)."""

    doomed: str = ""
    marker: str = ""

    def time(self, kernel, inputs, best_s, spec):
        import ray

        if ray.get_runtime_context().get_node_id() == self.doomed:
            Path(self.marker).write_text(spec.family_name)
            time.sleep(120)
        return super().time(kernel, inputs, best_s, spec)


def test_a_host_lost_mid_exploration_loses_only_its_in_flight_candidate(head, cluster, tmp_path):
    """A second node (no CPUs: only the measuring actors of its devices land there) is
    removed while one of its actors measures: that candidate is lost, the node's actors are
    dropped, the run goes on on the head node's (a candidate measured on the doomed node
    would hang: every stored one was measured on the head)."""
    node = head.add_node(num_cpus=0)
    marker = tmp_path / "measuring-on-the-doomed-node"

    def remove_when_measuring():
        deadline = time.monotonic() + 120
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        head.remove_node(node)

    remover = threading.Thread(target=remove_when_measuring, daemon=True)
    remover.start()
    evaluator = HangsOnTheDoomedNode(repeat=3, min_timed_s=0.0, max_timed_s=0.3, doomed=node.node_id,
                                     marker=str(marker))
    skeleton = _global_chunks((128, 256, 512, 1024, 2048))
    with TuningDB(tmp_path / "t.sqlite") as db, pytest.warns(ClusterWarning, match="a node of the cluster is gone"):
        result = explore(TOTAL, SIZES, db=db, executor=cluster, workers=2, seed=0, skeletons=[skeleton],
                         baseline="default", evaluator=evaluator, timeout_s=60)
        stored = searched(db.candidates(run_id=result.run_id))
    remover.join(10)
    assert marker.exists() and not remover.is_alive()  # the node went while its actor measured
    assert len(result.lost) == 1 and "measuring actor" in result.lost[0], result.report()
    assert "its node is gone" in result.lost[0] and "lost 1 in-flight candidate(s)" in result.report()
    assert result.tried == len(stored) == 6 - 1 and all(c.status in ("ok", "slow") for c in stored), result.report()
    assert not any(n["NodeID"] == node.node_id and n["Alive"] for n in __import__("ray").nodes())


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


POCL, OCLGRIND = "Portable Computing Language", "Oclgrind"


def test_a_sweep_runs_the_devices_at_once_each_keyed_separately(cluster, tmp_path):
    """(Each device's entries one after another: test_run_lanes_runs_each_lane_in_turn_...)"""
    path = tmp_path / "t.sqlite"
    entries = sweep_entries({"total": TOTAL}, [{"N": 4096}], [POCL, OCLGRIND])
    began: dict[str, float] = {}
    results = sweep(entries, db=path, executor=cluster, workers=1, max_candidates=2, seed=0,
                    skeletons=[_global_chunks((256,))], baseline="default", evaluator=QUICK,
                    started=lambda e: began.setdefault(e.device, time.time()))
    assert [r.device.split(" | ")[0] for r in results] == [POCL, OCLGRIND]
    with TuningDB(path) as db:
        rows = {device: db.candidates(device=r.device) for r, device in zip(results, (POCL, OCLGRIND))}
    for device, stored in rows.items():  # and the best measured again beside the baseline (driver._confirm)
        assert len(searched(stored)) == 2 and all(c.status in ("ok", "slow") for c in searched(stored)), (device, stored)
    first_finished = min(max(c.created for c in stored) for stored in rows.values())
    assert max(began.values()) < first_finished  # the second device began before the first was done


def test_ctrl_c_in_one_lane_of_a_sweep_stops_every_lane_and_keeps_their_rows(cluster, tmp_path):
    import ray

    path = tmp_path / "t.sqlite"
    entries = sweep_entries({"total": TOTAL}, [{"N": 4096}], [POCL, OCLGRIND])
    seen = []

    def interrupt_at_oclgrinds_first(candidate):
        seen.append(candidate)
        if OCLGRIND in candidate.device:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        sweep(entries, db=path, executor=cluster, workers=1, seed=0, budget_s=120, skeletons=[CHUNKS],
              baseline="default", evaluator=QUICK, progress=interrupt_at_oclgrinds_first)
    with TuningDB(path) as db:
        stored = db.candidates()
    assert sorted(c.derivation for c in stored) == sorted(c.derivation for c in seen)
    assert {c.device.split(" | ")[0] for c in stored} <= {POCL, OCLGRIND} and any(OCLGRIND in c.device for c in stored)
    deadline = time.monotonic() + 30  # both lanes' actors are killed: their CPUs come back
    while ray.available_resources().get("CPU", 0) < ray.cluster_resources()["CPU"] and time.monotonic() < deadline:
        time.sleep(0.2)
    assert ray.available_resources().get("CPU", 0) == ray.cluster_resources()["CPU"]


def test_run_lanes_runs_each_lane_in_turn_the_lanes_at_once_and_hands_back_a_lanes_error():
    from dpia.explore.sweep import run_lanes

    log, barrier = [], threading.Barrier(2, timeout=10)

    def run(index, check):
        if index in (0, 1):  # the first of each lane: both must be under way at once to pass
            barrier.wait()
        log.append(index)
        return index * 10

    assert run_lanes([[0, 2], [1, 3]], run) == [0, 10, 20, 30]
    assert log.index(2) > log.index(0) and log.index(3) > log.index(1)

    def fails_in_the_second_lane(index, check):
        if index == 1:
            raise ValueError("lane two broke")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # the first lane runs until told to stop
            check()
            time.sleep(0.01)
        return index

    began = time.monotonic()
    with pytest.raises(ValueError, match="lane two broke"):
        run_lanes([[0], [1]], fails_in_the_second_lane)
    assert time.monotonic() - began < 5  # the first lane was stopped, not waited for


def _no_opencl_here(*_):
    raise AssertionError("the driver opened an OpenCL device")


def test_cli_explores_a_sweep_of_sizes_and_devices_on_the_cluster_the_devices_at_once(cluster, tmp_path, capsys,
                                                                                     monkeypatch):
    """... from a driver that never opens a device: it resolves --device, explores and
    checks the best variant on the cluster's nodes."""
    import pyopencl

    import codegen_opencl.runtime as runtime

    path = tmp_path / "t.sqlite"
    with monkeypatch.context() as patched:  # undone before the Oclgrind replay of the recorded kernels
        patched.setattr(runtime, "devices", _no_opencl_here)  # this process cannot see a device; Ray's workers can
        patched.setattr(pyopencl, "get_platforms", _no_opencl_here)
        code = main(["explore", f"{SEED}:scal", "--size", "N=2^12,2^13", "--device", POCL, "--device", OCLGRIND,
                     "--candidates", "1", "--workers", "1", "--cluster", "auto", "--db", str(path), "--json"])
        captured = capsys.readouterr()
        assert code == 0, captured.err
        assert main(["explore", f"{SEED}:scal", "--size", "N=2^12", "--device", "no such device",
                     "--cluster", "auto", "--db", str(path)]) == 2  # bad usage, as without a cluster
        assert "no node of the cluster has the device no such device" in capsys.readouterr().err
    reports = json.loads(captured.out)
    assert [(r["sizes"]["N"], r["device"].split(" | ")[0]) for r in reports] == [
        (4096, POCL), (4096, OCLGRIND), (8192, POCL), (8192, OCLGRIND)], [(r["sizes"], r["device"]) for r in reports]
    assert all(r["lost"] == [] == r["dropped"] for r in reports), reports
    assert all(r["correct"] and r["device"] == cluster_key for r, cluster_key in zip(
        reports, [runtime.identity_key(cluster.identity(d)) for d in (POCL, OCLGRIND)] * 2)), reports
    progress = [line for line in captured.err.splitlines() if "candidates," in line]
    assert progress and all(line.startswith("scal at N=") and " on " in line.split(":")[0] for line in progress)
    with TuningDB(path) as db:
        for size in (4096, 8192):
            for device in (POCL, OCLGRIND):
                rows = [c for c in db.candidates(sizes={"N": size}) if device in c.device]
                assert len(rows) == 1 and "measured on" in rows[0].params.get("where", ""), (size, device, rows)


def test_a_driver_without_the_device_explores_with_the_key_and_limits_the_cluster_reports(cluster, tmp_path,
                                                                                          monkeypatch):
    import codegen_opencl.runtime as runtime
    from dpia.explore.sweep import device_lanes

    reported = {d: cluster.identity(d) for d in (POCL, OCLGRIND)}  # before this host loses its devices
    with monkeypatch.context() as patched:  # undone before the Oclgrind replay of the recorded kernels
        patched.setattr(runtime, "devices", lambda: [])  # this process sees no OpenCL device; Ray's workers do
        with pytest.raises(runtime.RuntimeError_, match="no OpenCL device found"):
            explore(TOTAL, {"N": 4096}, max_candidates=1)  # on this host alone: nothing to explore on
        for device in (POCL, OCLGRIND):
            assert cluster.identity(device) == reported[device]
            with TuningDB(tmp_path / "t.sqlite") as db:
                result = explore(TOTAL, {"N": 4096}, device=device, db=db, executor=cluster, workers=1, seed=0,
                                 max_candidates=1, skeletons=[_global_chunks((256,))], baseline="default",
                                 evaluator=QUICK)
                stored = db.candidates(run_id=result.run_id)
            assert result.device == runtime.identity_key(reported[device]) and result.device.startswith(device)
            assert len(stored) == 1 and all(c.status in ("ok", "slow") for c in stored), result.report()
        assert device_lanes([POCL, OCLGRIND, POCL], cluster) == [[0, 2], [1]]  # a sweep's lanes, by the cluster
    with pytest.raises(ClusterError, match="no node of the cluster has the device no such device"):
        cluster.identity("no such device")


def test_a_measuring_actor_whose_device_has_other_limits_or_is_not_on_its_node_is_not_used(cluster, monkeypatch):
    """As a partitioned GPU would: the same key, other limits (here the explored identity is
    altered; every actor reports its device's real limits); and a device slot its node does
    not have (a device listed that went meanwhile): none can measure, a ClusterError says
    why for each."""
    real, listed = cluster.identity, cluster.devices

    def partitioned(device=None):
        return {**real(device), "compute_units": real(device)["compute_units"] + 1}

    monkeypatch.setattr(cluster, "identity", partitioned)
    monkeypatch.setattr(cluster, "devices", lambda: listed() + [attrs.evolve(s, ordinal=s.ordinal + 5) for s in listed()])
    with pytest.warns(ClusterWarning, match="other limits|cannot open the device"), \
            pytest.raises(ClusterError, match="no measuring actor for the device .* could start") as raised:
        explore(TOTAL, {"N": 4096}, device=POCL, executor=cluster, workers=1, max_candidates=1,
                skeletons=[_global_chunks((256,))], baseline="default", evaluator=QUICK)
    message = str(raised.value)
    assert message.count("has a device of this key with other limits") == 2, message  # two actors per device
    assert message.count("cannot open the device: ExploreError: this node has 1 device(s) ") == 2, message
    assert message.count(f"a measuring actor of {POCL}") == 4 and "not a device #5" in message, message


def test_an_unreachable_cluster_is_a_typed_error(monkeypatch):
    import ray

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", lambda **_: (_ for _ in ()).throw(ConnectionError("no cluster found")))
    with pytest.raises(ClusterError, match="cannot reach the Ray cluster at 'auto'"):
        Cluster.connect("auto")


def test_sweep_entries_cover_every_program_size_and_device_and_an_empty_sweep_is_refused():
    from dpia.explore import ExploreError

    entries = sweep_entries({"a": TOTAL, "b": TOTAL}, [{"N": 8}, {"N": 16}], ["X", "Y"])
    assert [(e.name, e.sizes["N"], e.device) for e in entries] == [
        (p, n, d) for p in "ab" for n in (8, 16) for d in "XY"]
    assert entries[0].describe() == "a at N=8 on X"
    with pytest.raises(ExploreError, match="at least one"):
        sweep([])
