"""dpia.programs: loading FILE[:NAME], the canonical program key, --size specs, fixed sizes,
random inputs, the comparison with the interpreter and the known amount of work."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import functional as fl
from dpia.programs import (
    ProgramLoadError,
    SizeSpecError,
    bytes_moved,
    canonical,
    fix_sizes,
    known_flops,
    load,
    parse_sizes,
    random_inputs,
    relative_error,
    signature,
    size_vars,
    timing_inputs,
)

SEED = Path(__file__).resolve().parents[1] / "examples" / "seed.py"
SEED_NAMES = ["asum", "dot", "gemv", "mm", "scal", "stencil", "total"]

ONE_PROGRAM = """
import functional as fl
N = fl.nat("N", multiple_of=64)
vector = fl.array(N, fl.f32)  # a type, not a program
scale = 2.0                   # not a program either
total = fl.fun([vector], lambda xs: fl.reduce(fl.add, 0.0, xs))
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# ------------------------------------------------------------------------------- load


def test_load_a_named_program_from_a_python_file():
    name, program = load(f"{SEED}:dot")
    assert name == "dot" and program.t is not None  # typed
    assert str(program).startswith("fun(N: nat, xs: N.f32, ys: N.f32) => reduce (+) 0.0")


def test_a_file_with_one_program_needs_no_name(tmp_path):
    path = _write(tmp_path, "one.py", ONE_PROGRAM)
    name, program = load(str(path))
    assert name == "total" and size_vars(program)[0].multiple_of == 64


def test_several_programs_and_no_name_lists_them():
    with pytest.raises(ProgramLoadError, match="defines 7 programs; choose one") as info:
        load(str(SEED))
    assert all(n in str(info.value) for n in SEED_NAMES)


def test_an_unknown_name_lists_the_known_ones():
    with pytest.raises(ProgramLoadError, match="no program 'gemm'; the programs: " + ", ".join(SEED_NAMES)):
        load(f"{SEED}:gemm")


def test_a_missing_file(tmp_path):
    with pytest.raises(ProgramLoadError, match="no such file"):
        load(str(tmp_path / "nothing.py"))
    with pytest.raises(ProgramLoadError, match="no such file"):
        load(str(tmp_path / "nothing.py") + ":dot")


def test_a_directory_is_not_a_program_file(tmp_path):
    with pytest.raises(ProgramLoadError, match="is a directory"):
        load(str(tmp_path))


def test_a_file_without_programs(tmp_path):
    with pytest.raises(ProgramLoadError, match="defines no program"):
        load(str(_write(tmp_path, "empty.py", "x = 1\n")))
    with pytest.raises(ProgramLoadError, match="defines no program"):
        load(str(_write(tmp_path, "empty.dpia", "\n")))


def test_a_python_file_that_fails_to_import(tmp_path):
    with pytest.raises(ProgramLoadError, match="importing .*broken.py failed: ZeroDivisionError"):
        load(str(_write(tmp_path, "broken.py", "1 / 0\n")))


def test_a_python_file_imports_its_neighbours(tmp_path):
    _write(tmp_path, "helpers.py", "import functional as fl\nN = fl.nat('N')\n")
    path = _write(tmp_path, "uses.py", "import functional as fl\nfrom helpers import N\n"
                                       "double = fl.fun([fl.array(N, fl.f32)], lambda xs: fl.map(lambda x: x * 2.0, xs))\n")
    assert load(str(path))[0] == "double"


def test_a_program_that_does_not_type(tmp_path):
    text = "import functional as fl\nbad = fl.fun([fl.f32], lambda x: fl.reduce(fl.add, 0.0, x))\n"
    with pytest.raises(ProgramLoadError, match="program bad in .* does not type"):
        load(str(_write(tmp_path, "bad.py", text)))


def test_a_text_file_holds_one_program_named_after_the_file(tmp_path):
    _, dot = load(f"{SEED}:dot")
    path = _write(tmp_path, "my-dot.dpia", str(dot) + "\n")
    name, program = load(str(path))
    assert name == "my_dot" and program == dot
    assert load(f"{path}:my_dot")[1] == dot
    with pytest.raises(ProgramLoadError, match="no program 'other'; the programs: my_dot"):
        load(f"{path}:other")
    assert load(str(_write(tmp_path, "sum.txt", "fun(N: nat, xs: N.f32) => reduce (+) 0.0 xs")))[0] == "sum"


def test_a_text_file_that_does_not_parse(tmp_path):
    with pytest.raises(ProgramLoadError, match="does not parse"):
        load(str(_write(tmp_path, "bad.dpia", "fun(N: nat, xs: N.f32) => reduce (+")))


# -------------------------------------------------------------------------- canonical


def test_canonical_is_the_same_up_to_renaming():
    n = fl.nat("N")
    a = fl.fun([fl.array(n, fl.f32)], lambda xs: fl.map(lambda x: x * 2.0, xs))
    b = fl.fun([fl.array(n, fl.f32)], lambda values: fl.map(lambda v: v * 2.0, values))
    assert canonical(a) == canonical(b) == "fun(N: nat, x0: N.f32) => map (fun(x1) => x1 * 2.0) x0"


def test_canonical_distinguishes_programs_and_size_facts():
    n, n64 = fl.nat("N"), fl.nat("N", multiple_of=64)
    double = fl.fun([fl.array(n, fl.f32)], lambda xs: fl.map(lambda x: x * 2.0, xs))
    triple = fl.fun([fl.array(n, fl.f32)], lambda xs: fl.map(lambda x: x * 3.0, xs))
    facts = fl.fun([fl.array(n64, fl.f32)], lambda xs: fl.map(lambda x: x * 2.0, xs))
    assert len({canonical(double), canonical(triple), canonical(facts)}) == 3


@pytest.mark.parametrize("name", SEED_NAMES)
def test_canonical_text_parses_back_to_the_same_key(name):
    _, program = load(f"{SEED}:{name}")
    key = canonical(program)
    assert canonical(fl.parse(key)) == key and fl.parse(key) == program


def test_canonical_renames_shadowed_binders_apart():
    text = "fun(N: nat, xs: N.f32) => map (fun(x) => x * reduce (+) 0.0 (map (fun(x) => x + 1.0) xs)) xs"
    key = canonical(fl.parse(text))
    assert key == ("fun(N: nat, x0: N.f32) => map (fun(x1) => x1 * reduce (+) 0.0 (map (fun(x2) => x2 + 1.0) x0)) x0")


# ------------------------------------------------------------------------------ sizes


def test_parse_sizes():
    _, mm = load(f"{SEED}:mm")
    assert parse_sizes(["M=4", "K = 8", "N=2^4"], mm, complete=True) == {"M": 4, "K": 8, "N": 16}
    assert parse_sizes(["N=1_024"]) == {"N": 1024}
    assert parse_sizes([], mm) == {}
    assert parse_sizes(["N=8", "N=8"], mm) == {"N": 8}


@pytest.mark.parametrize("specs, message", [
    (["N"], "expected NAME=VALUE"),
    (["=5"], "expected NAME=VALUE"),
    (["N=big"], "expected an integer"),
    (["N=1.5"], "expected an integer"),
    (["N=4", "N=8"], "size N given twice"),
    (["Q=4"], "the program has no size Q; its sizes: M, K, N"),
    (["N=0"], "must be at least 1"),
    (["N=-3"], "must be at least 1"),
])
def test_bad_size_specs(specs, message):
    _, mm = load(f"{SEED}:mm")
    with pytest.raises(SizeSpecError, match=message):
        parse_sizes(specs, mm)


def test_missing_sizes_when_all_are_needed():
    _, mm = load(f"{SEED}:mm")
    with pytest.raises(SizeSpecError, match="missing size K, N: give --size K=VALUE"):
        parse_sizes(["M=4"], mm, complete=True)


def test_sizes_that_contradict_the_facts(tmp_path):
    _, total = load(str(_write(tmp_path, "one.py", ONE_PROGRAM)))
    assert parse_sizes(["N=128"], total) == {"N": 128}
    with pytest.raises(SizeSpecError, match="size N = 100: the program says it is a multiple of 64"):
        parse_sizes(["N=100"], total)


def test_sizes_that_contradict_the_types():
    n = fl.nat("N")
    first_ten = fl.fun([fl.array(n, fl.f32)], lambda xs: fl.map(lambda x: x * 2.0, fl.take(10, xs)))
    assert parse_sizes(["N=16"], first_ten) == {"N": 16}
    with pytest.raises(SizeSpecError, match="contradict the program's types"):
        parse_sizes(["N=4"], first_ten)


def test_fix_sizes_replaces_size_binders_by_constants():
    _, mm = load(f"{SEED}:mm")
    fixed = fl.infer(fix_sizes(mm, {"M": 2, "K": 3, "N": 4}))
    assert size_vars(fixed) == [] and str(fixed.type) == "2.3.f32 -> 3.4.f32 -> 2.4.f32"
    partly = fl.infer(fix_sizes(mm, {"K": 3}))
    assert [v.name for v in size_vars(partly)] == ["M", "N"]


# ----------------------------------------------------------------------------- inputs


def test_random_inputs_follow_the_types_and_are_never_zero():
    _, gemv = load(f"{SEED}:gemv")
    inputs = random_inputs(gemv, {"M": 3, "N": 5}, seed=7)
    assert [np.shape(x) for x in inputs] == [(3, 5), (5,), (3,), (), ()]
    assert all(np.asarray(x).dtype == np.float32 and np.all(np.asarray(x) != 0) for x in inputs)
    assert all(np.array_equal(a, b) for a, b in zip(inputs, random_inputs(gemv, {"M": 3, "N": 5}, seed=7)))
    assert not np.array_equal(inputs[0], random_inputs(gemv, {"M": 3, "N": 5}, seed=8)[0])
    big = random_inputs(gemv, {"M": 64, "N": 64}, seed=0)[0]
    assert (big < 0).any() and (big > 0).any() and np.abs(big).min() >= 0.5


def test_random_inputs_of_tuples_ints_and_bools():
    n = fl.nat("N")
    prog = fl.fun([fl.array(n, fl.tuple_of(fl.i32, fl.boolean))], lambda ps: fl.map(fl.fst, ps))
    [(ints, flags)] = random_inputs(prog, {"N": 50}, seed=0)
    assert ints.dtype == np.int32 and ints.min() >= 1 and flags.dtype == np.bool_ and flags.shape == (50,)
    assert fl.interpret(prog, (ints, flags)).shape == (50,)


def test_timing_inputs_spread_indices_over_the_array_they_index():
    """Timing inputs draw an integer input over the range the program indexes with its
    values (here a gather `xs[j]` for each j of the input), so gathers spread over memory
    as real indices do; a generate's own counter (`row[k]`) sets no range; checking inputs
    keep 1 to 9; without a gather the timing inputs are the checking ones."""
    n, m = fl.nat("N"), fl.nat("M")
    gather = fl.fun([fl.array(n, fl.array(4, fl.f32)), fl.array(m, fl.i32)],
                    lambda xs, js: fl.map(lambda j: fl.generate(4, lambda k: xs[j][k]), js))
    sizes = {"N": 5000, "M": 4000}
    xs, js = timing_inputs(gather, sizes, seed=1)
    assert js.dtype == np.int32 and js.min() >= 0 and js.max() < 5000 and js.max() > 4000
    assert random_inputs(gather, sizes, seed=1)[1].max() <= 9
    got = fl.interpret(gather, xs, js)  # every index in range: the interpreter accepts them
    np.testing.assert_array_equal(got, xs[js])
    counting = fl.fun([fl.array(n, fl.array(4, fl.f32)), fl.array(m, fl.i32)],
                      lambda xs, js: fl.map(lambda j: fl.generate(4, lambda k: xs[0][k] + fl.cast(fl.f32, j)), js))
    for a, b in zip(timing_inputs(counting, sizes, seed=1), random_inputs(counting, sizes, seed=1)):
        np.testing.assert_array_equal(a, b)


def test_signature_names_the_inputs():
    _, dot = load(f"{SEED}:dot")
    params, result = signature(dot)
    assert [name for name, _ in params] == ["xs", "ys"] and str(result) == "f32"


# ---------------------------------------------------------------------- checks and work


def test_relative_error():
    assert relative_error(np.float32(2.0), np.float32(2.0)) == 0.0
    assert relative_error(np.array([1.0, 150.0]), np.array([1.0, 100.0])) == 0.5
    assert relative_error(np.array([0.5]), np.array([0.25])) == 0.25  # relative to max(1, |want|)
    assert math.isinf(relative_error(np.zeros(3), np.zeros(4)))
    assert math.isinf(relative_error(np.array([np.nan]), np.array([1.0])))
    assert relative_error((np.ones(2), np.float32(3)), (np.ones(2), np.float32(3))) == 0.0


def test_known_flops_for_matrix_products_only():
    _, mm = load(f"{SEED}:mm")
    assert known_flops(mm, {"M": 4, "K": 8, "N": 16}) == 2 * 4 * 8 * 16
    for name, sizes in (("dot", {"N": 8}), ("gemv", {"M": 4, "N": 8}), ("total", {"N": 8})):
        assert known_flops(load(f"{SEED}:{name}")[1], sizes) is None


def test_bytes_moved_counts_inputs_and_output():
    assert bytes_moved((np.zeros(4, np.float32), np.float32(1)), np.zeros((2, 2), np.float64)) == 16 + 4 + 32
