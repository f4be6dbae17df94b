"""`dpia explore` kept within its budget and memory: progress from the start, the final
check of a large product in bounded memory, sizes that cannot fit refused in one line."""

from __future__ import annotations

import json
import time
from pathlib import Path

from dpia.cli import main

SEED = Path(__file__).resolve().parents[1] / "examples" / "seed.py"


def test_sizes_that_cannot_fit_are_refused_in_one_line(capsys, tmp_path):
    started = time.monotonic()
    code = main(["explore", f"{SEED}:total", "--size", "N=2^40", "--budget", "10s", "--db",
                 str(tmp_path / "t.sqlite")])
    _, err = capsys.readouterr()
    assert code == 2 and time.monotonic() - started < 10  # refused as bad input, before any work
    errors = [line for line in err.splitlines() if "error" in line]
    assert len(errors) == 1 and "dpia explore: error: the sizes N=1099511627776 need" in errors[0]


def test_a_large_product_is_checked_in_bounded_memory_within_the_budget(capsys, tmp_path):
    """mm at 512^3: interpreting it whole would hold 512^3 products; the report says what was
    checked instead, and the baseline is the preset `dpia run` uses."""
    started = time.monotonic()
    code = main(["explore", f"{SEED}:mm", "--size", "M=512", "--size", "N=512", "--size", "K=512",
                 "--budget", "8s", "--workers", "1", "--json", "--db", str(tmp_path / "t.sqlite")])
    out, err = capsys.readouterr()
    wall = time.monotonic() - started
    assert code == 0, err
    r = json.loads(out)
    assert r["correct"] is True and r["check"]["method"] == "reduced+sampled"
    sizes = r["check"]["check_sizes"]  # reduced, and as divisible as the best variant needs (which the search decides)
    assert set(sizes) == {"M", "N", "K"} and all(64 <= v < 512 for v in sizes.values()), sizes
    assert r["check"]["sampled_rows"]["M"][-1] == 511
    assert r["baseline"] == "preset" and r["speedup"] >= 1.0
    assert wall < 8 * 1.1 + 60, wall  # the budget's 10 % plus half a candidate's timeout (the baseline's overtime)
    lines = err.splitlines()
    assert "building the search space" in lines[0] and "checking and timing the best variant" in err
    # the space (tens of seconds for mm here) is built while the baseline is measured, not before it
    assert "measuring the baseline while the search space is built" in err
    assert r["space_s"] is None or r["space_s"] < 8 * 1.1
