"""README.md's code runs as written: its ```python blocks in order in one namespace (on
PoCL), and the `dpia ...` and `python examples/...` commands of its ```bash blocks as
subprocesses, with every `--size` capped at 32 and `--budget` replaced by two candidates
on one worker so that they run in seconds (installs and the test suite itself are not
run).  It also says nothing only the project's authors would understand and links
nothing outside the repository."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
MAX_SIZE = 32  # a 32^3 matrix product is small enough for Oclgrind too (tests/oclgrind.py)


def code_blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)


def commands(text: str) -> list[str]:
    """The commands of the bash blocks worth running: `dpia ...` and `python examples/...`."""
    out = []
    for block in code_blocks(text, "bash"):
        for line in block.splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            out += [c.strip() for c in line.split("&&") if re.match(r"dpia\s|python examples/", c.strip())]
    return out


def small(command: str) -> list[str]:
    """The command's arguments with small sizes and a short search (see the module docstring)."""
    args = shlex.split(command)
    out = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--size":
            name, value = args[i + 1].split("=")
            out += [arg, f"{name}={min(int(value), MAX_SIZE)}"]
            i += 2
            continue
        if arg == "--budget":
            out += ["--candidates", "2", "--workers", "1", "--budget", "2m"]
            i += 2
            continue
        out.append(str(ROOT / arg) if arg.startswith("examples/") else arg)
        i += 1
    if out[0] == "dpia":
        return [sys.executable, "-m", "dpia.cli", *out[1:]]
    return [sys.executable, *out[1:]]


def test_the_readme_has_commands_and_python_blocks():
    """Guards the extraction itself: a README reformatted out of its reach fails here."""
    assert len(code_blocks(README, "python")) >= 3
    assert [c.split()[0] for c in commands(README)].count("dpia") >= 4
    assert "python examples/seed.py" in commands(README)


def test_commands_are_made_small():
    cmd = small("dpia explore examples/seed.py:mm --size M=1024 --size N=2 --budget 10m --plots")
    assert cmd[:3] == [sys.executable, "-m", "dpia.cli"]
    assert cmd[3:] == ["explore", str(ROOT / "examples/seed.py:mm"), "--size", "M=32", "--size", "N=2",
                       "--candidates", "2", "--workers", "1", "--budget", "2m", "--plots"]


@pytest.mark.slow
def test_python_blocks_run_in_order():
    namespace: dict = {"__name__": "readme"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for block in code_blocks(README, "python"):
            exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102 -- the README's own code
    printed = out.getvalue()
    # what the comments promise
    assert "(N: nat) -> N.f32 -> N.f32 -> f32" in printed
    assert "fun(N: nat, xs: N.f32, ys: N.f32) => reduce (+) 0.0 (map (fun(p) => fst p * snd p) (zip xs ys))" in printed
    assert "fun(N: nat, xs: N.f32) => reduce (+) 0.0 (map abs xs)" in printed
    assert "kernel void" in printed
    import numpy as np

    x = namespace["x"]
    got, seconds = namespace["kernel"](x), namespace["kernel"].time(x)
    assert np.isclose(got, x.sum(), rtol=1e-4) and seconds > 0


@pytest.mark.slow
@pytest.mark.parametrize("command", commands(README))
def test_command_runs(command, tmp_path):
    if "--plots" in command:
        pytest.importorskip("matplotlib", reason="dpia explore --plots draws with matplotlib (pip install .[plot])")
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "DPIA_TUNING_DB": str(tmp_path / "tuning.sqlite")}
    run = subprocess.run(small(command), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]


@pytest.mark.parametrize("pattern, what", [
    (r"\]\((?!#)(?![\w./-]+\))", "a link outside the repository"),
    (r"https?://", "a web address"),
    (r"\.\./", "a path outside the repository"),
    (r"\bthe seed\b|\bseed's\b", "the project's internal name for its starting material"),
    (r"\bissue \d", "an issue number"),
    (r"\blent\b|\bsession\s*\d", "talk about the machines and sessions it was written in"),
])
def test_the_readme_speaks_to_users(pattern, what):
    found = [line for line in README.splitlines() if re.search(pattern, line, flags=re.IGNORECASE)]
    assert found == [], f"README.md has {what}: {found}"


def test_the_readme_names_files_that_exist():
    """Every `path/with.ext` the README mentions exists in the repository."""
    named = set(re.findall(r"`((?:[\w-]+/)+[\w.-]*\.(?:py|md|sh|json|cl))\b", README))
    missing = sorted(p for p in named if not (ROOT / p).exists())
    assert named and missing == []
