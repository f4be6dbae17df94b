"""benchmarks/kernel_counters.py, the hardware counters of issue 13's misses: the parts that run
without an NVIDIA device (ncu's CSV read back, a launch's CUDA shape, the PTX's parameter counts, the
rows it profiles) and the lines benchmarks/issue13.py puts under its table from them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
import issue13  # noqa: E402
import kernel_counters as kc  # noqa: E402

RAW = '''==PROF== Connected to process 1
"ID","Kernel Name","Grid Size","Block Size","gpu__time_duration.sum","sm__throughput.avg.pct_of_peak_sustained_elapsed","launch__registers_per_thread","smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio","smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio","smsp__average_warps_issue_stalled_wait_per_issue_active.ratio"
"","","","","nsecond","%","register/thread","ratio","ratio","ratio"
"0","k0","(32, 32, 1)","(16, 16, 1)","3,374,112","81.5","128","1.25","0.40","0"
==PROF== Disconnected
'''


def test_ncu_raw_page_is_read_back_and_summarised():
    rows = kc.parse_raw(RAW)
    assert len(rows) == 1 and rows[0]["Kernel Name"] == "k0"
    s = kc.summary(rows[0])
    assert s["time"] == 3374112.0 and s["SM %"] == 81.5 and s["registers"] == 128.0
    assert s["top stalls"] == [("barrier", 1.25), ("long_scoreboard", 0.40)]  # a zero stall is no reason
    assert "3.374 ms" in kc.summary_text(s) and "barrier 1.25" in kc.summary_text(s)
    assert kc.parse_raw("==PROF== nothing profiled\n") == []


def test_launches_become_cuda_grids_of_whole_groups():
    assert kc.cuda_shape((256, 8), (8, 8)) == ((32, 1, 1), (8, 8, 1))
    assert kc.cuda_shape((1000,), None) == ((4, 1, 1), (250, 1, 1))  # the largest block of <= 256 dividing 1000
    with pytest.raises(kc.CountersError, match="whole number"):
        kc.cuda_shape((100,), (64,))


def test_ptx_entries_and_their_parameters_are_counted():
    ptx = ".visible .entry k0(\n .param .u64 k0_param_0,\n .param .u32 k0_param_1\n)\n{ ret; }\n" \
          ".visible .entry k1()\n{ ret; }\n"
    assert kc.entry_params(ptx) == {"k0": 2, "k1": 0}


def test_only_missed_rows_are_profiled(tmp_path):
    path = tmp_path / "issue13.json"
    path.write_text(json.dumps({"meta": {}, "rows": [
        {"target": "a", "kernel": "x", "verdicts": [{"verdict": "miss"}]},
        {"target": "b", "kernel": "y", "verdicts": [{"verdict": "met"}]},
        {"target": "c", "error": "failed", "verdicts": None}]}))
    assert kc.missed_rows(path) == [("a", "x")]
    with pytest.raises(kc.CountersError, match="not a row"):
        kc.row_of("nothing:n=1")


def test_issue13_puts_counters_under_the_miss(tmp_path):
    limits, counters = tmp_path / "limits.json", tmp_path / "counters.json"
    limits.write_text(json.dumps({"mm:m=1": "tiles too small"}))
    counters.write_text(json.dumps({"mm:m=1": {
        "label": "preset", "static mix": "9 instructions: fma.rn 4", "same bytes": True,
        "counters": [{"kernel": "k0", "time": 2.5e6, "SM %": 80.0, "registers": 128.0,
                      "top stalls": [["barrier", 1.5]]}],
        "reference": [{"kernel": "sm90_sgemm", "time": 2.0e6, "SM %": 92.0}]}}))
    results = [{"target": "mm:m=1", "verdicts": [{"verdict": "miss"}]},
               {"target": "mm:m=2", "verdicts": [{"verdict": "met"}]}]
    text = "\n".join(issue13.limits_of_misses(results, limits, counters))
    assert "- `mm:m=1`: tiles too small" in text
    assert "ours `k0`; 2.5 ms; SM 80%; registers 128; stalls per issue: barrier 1.50" in text
    assert "cuBLAS `sm90_sgemm`; 2 ms; SM 92%" in text
    assert "mm:m=2" not in text
    counters.write_text(json.dumps({"mm:m=1": {"label": "p", "same bytes": False, "counters": []}}))
    assert "not ours" in "\n".join(issue13.limits_of_misses(results, limits, counters))


def test_a_plan_is_saved_with_its_launches_and_argument_bytes(tmp_path):
    """What the process under ncu loads in place of an OpenCL build: every argument's bytes, each
    kernel's name and its launch as a CUDA grid."""
    import numpy as np

    import dpia
    import suite  # examples/, on the path through kernel_counters

    entry = suite.BY_NAME["black_scholes"]
    inputs = entry.make_inputs(np.random.default_rng(0), n=64)
    bound = dpia.compile(entry.program, db=False).bind(*inputs)
    kc.save_launch(bound, tmp_path)
    with np.load(tmp_path / "launch.npz") as saved:
        meta = json.loads(str(saved["meta"]))
        host = [saved[f"arg{i}"] for i in range(meta["args"])]
    assert meta["args"] == len(bound._args) and meta["names"] == [ph.name for ph in bound._kernel.phases]
    assert meta["shapes"] == [list(map(list, kc.cuda_shape(g, lc))) for g, lc in bound._launches]
    first = np.asarray(inputs[0], dtype=np.float32).ravel()
    assert any(h.dtype == np.uint8 and np.array_equal(h[:first.nbytes].view(np.float32), first) for h in host)


def test_environment_registers_become_what_cuda_holds_there():
    """NVIDIA's OpenCL reads get_num_groups and the launch offsets from %envreg: 0 under CUDA, so a loop
    stepping by get_num_groups(1) would never end (the first transplants hung)."""
    ptx = ("\tmov.b32 \t%r6, %envreg4;\n\tmov.u32 \t%r1, %ntid.y;\n\tmov.b32 \t%r14, %envreg7;\n"
           "\tmov.b32 \t%r20, %envreg0;\n\tmov.b32 \t%r49, %envreg6;\n")
    out = kc.cuda_ptx(ptx)
    assert "envreg" not in out
    assert "mov.b32 \t%r6, 0;" in out and "mov.b32 \t%r20, 0;" in out
    assert "mov.u32 \t%r14, %nctaid.y;" in out and "mov.u32 \t%r49, %nctaid.x;" in out
    with pytest.raises(kc.CountersError, match=r"\[12\]"):
        kc.cuda_ptx("\tmov.b32 \t%r1, %envreg12;\n")
