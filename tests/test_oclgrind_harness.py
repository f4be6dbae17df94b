"""The Oclgrind replay's own rules (tests/oclgrind.py): which reports send a kernel to be
checked again without optimisation, and which never do."""

from __future__ import annotations

from tests.oclgrind import _only_uninitialised

UNINITIALISED = """Uninitialized value written to local memory address 0x1000000000020
\tKernel: program
\tEntity: Global(2,0,0) Local(2,0,0) Group(0,0,0)
\t  store <4 x float> undef, <4 x float> addrspace(3)* %arrayidx76, align 16, !dbg !170
\tAt line 32 (column 57) of input.cl:
\t  (source not available)
\t
"""
RACE = """Read-write data race at global memory address 0x5000000000104
\tKernel: program
\t
\tFirst entity:  Global(2,0,0) Local(0,0,0) Group(2,0,0)
\t  %8 = load <2 x float>, <2 x float> addrspace(1)* %arrayidx126, align 8
\tAt line 25 (column 30) of input.cl:
\t  acc8_0 = (acc8_0 + tmp2[2 * i14]);
"""


def test_only_reports_of_uninitialised_values_are_checked_again_unoptimised():
    assert _only_uninitialised(UNINITIALISED)
    assert _only_uninitialised(UNINITIALISED + "\n" + UNINITIALISED)
    assert not _only_uninitialised(RACE)
    assert not _only_uninitialised(UNINITIALISED + "\n" + RACE)  # a race is never retried away
    assert not _only_uninitialised("")
    assert not _only_uninitialised("Invalid read of size 4 at global memory address 0x10\n\tKernel: program\n")


def test_a_recorded_launch_appears_whole_or_not_at_all(tmp_path, monkeypatch):
    """The replayer reads every *.pkl while workers may still be writing: a record is written
    under another name and renamed, and a folder removed meanwhile is not an error."""
    import pickle

    from codegen_opencl import runtime

    monkeypatch.setenv("DPIA_RECORD_KERNELS", str(tmp_path))
    runtime._record("build", source_sha1="abc")
    (record,) = tmp_path.iterdir()
    assert record.suffix == ".pkl"
    assert pickle.loads(record.read_bytes()) == {"kind": "build", "source_sha1": "abc"}

    def removed_meanwhile(*_args, **_kwargs):
        raise FileNotFoundError("the folder is gone")

    monkeypatch.setattr(runtime.tempfile, "mkstemp", removed_meanwhile)
    runtime._record("build", source_sha1="def")  # no error, nothing written
    assert list(tmp_path.iterdir()) == [record]


def test_sixteen_lane_vectors_are_recognised_in_sources():
    from tests.oclgrind import sixteen_lanes

    assert sixteen_lanes("float16 acc;") and sixteen_lanes("(global const uint16*)x") and sixteen_lanes("double16 d")
    assert not sixteen_lanes("float8 acc; float4 b; int i16; myfloat16 x; float16x")


_SPLIT_FLOAT16 = """
kernel void split(global const float* xs, global float* out) {
  int i = get_global_id(0);
  float16 w = ((global const float16*)xs)[i];
  ((global float8*)out)[2 * i] = w.lo;
  ((global float8*)out)[2 * i + 1] = w.hi;
}"""


def test_oclgrind_reports_a_float16_read_from_an_initialised_buffer_as_uninitialised():
    """Why kernels with 16-lane vectors are checked without the uninitialised-value check
    (tests/oclgrind.py): the check is wrong on them.  When this fails, Oclgrind was mended:
    drop the exemption."""
    import numpy as np
    import pyopencl as cl

    from codegen_opencl.runtime import choose_device
    from tests.oclgrind import captured_stderr, environment

    xs = np.arange(32, dtype=np.float32)
    out = np.zeros_like(xs)
    with environment(OCLGRIND_UNINITIALIZED="1"), captured_stderr() as stderr:
        ctx = cl.Context([choose_device("oclgrind")])
        queue = cl.CommandQueue(ctx)
        mf = cl.mem_flags
        a = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=xs)
        b = cl.Buffer(ctx, mf.WRITE_ONLY, out.nbytes)
        cl.Program(ctx, _SPLIT_FLOAT16).build().split(queue, (2,), None, a, b)
        cl.enqueue_copy(queue, out, b)
        queue.finish()
    assert np.array_equal(out, xs)  # every value read and written, yet:
    assert "Uninitialized value written to global memory" in stderr[0]


def test_a_workers_counts_and_fixture_problems_reach_the_controller():
    """Under pytest-xdist each worker checks its own launches; the controller's summary line
    counts every worker's, and a problem found in a worker's fixtures fails the session."""
    from types import SimpleNamespace

    import pytest

    from tests import conftest
    from tests.oclgrind import Replayer

    worker = Replayer(enabled=False)
    worker.built.update({"k1", "k2"})
    worker.launched.add("k1")
    worker.checked.add("k1")
    worker.launches_too_large = 3
    worker_config = SimpleNamespace(stash=pytest.Stash(), workeroutput={})
    worker_config.stash[conftest._REPLAYER] = worker
    worker_config.stash[conftest._SESSION_PROBLEMS] = "race in a fixture's kernel"
    worker_session = SimpleNamespace(config=worker_config, exitstatus=pytest.ExitCode.OK)
    conftest.pytest_sessionfinish(worker_session, 0)
    assert worker_session.exitstatus == pytest.ExitCode.OK  # the worker leaves it to the controller

    controller = Replayer(enabled=False)
    controller_config = SimpleNamespace(stash=pytest.Stash())
    controller_config.stash[conftest._REPLAYER] = controller
    for _ in range(2):  # two workers that saw the same kernels
        conftest.pytest_testnodedown(SimpleNamespace(config=controller_config,
                                                     workeroutput=worker_config.workeroutput), None)
    assert controller.summary().startswith("Oclgrind: 2 kernels built, 1 launched, 1 checked clean")
    assert "6 launches too large" in controller.summary()
    session = SimpleNamespace(config=controller_config, exitstatus=pytest.ExitCode.OK)
    conftest.pytest_sessionfinish(session, 0)
    assert session.exitstatus == pytest.ExitCode.TESTS_FAILED
    assert "race in a fixture's kernel" in controller_config.stash[conftest._SESSION_PROBLEMS]
