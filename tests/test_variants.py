"""dpia.compile of a high-level program (dpia.variants.VariantKernel): per input sizes the
tuning database's best variant, replayed from its derivation, else the default schedule;
low-level programs compile as before.  Every test uses its own database under tmp_path."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import dpia
import functional as fl
from codegen_opencl.runtime import Kernel, choose_device, device_key
from dpia.programs import canonical, fix_sizes, load, random_inputs, relative_error
from dpia.explore.tuning import Candidate, TuningDB
from dpia.variants import TuningWarning, Variant, VariantKernel, choose_variant
from functional import schedules as S
from functional.derivation import Derivation, derive

SEED = Path(__file__).resolve().parents[1] / "examples" / "seed.py"


@pytest.fixture(autouse=True)
def private_db(tmp_path, monkeypatch):
    """Never the user's cache: the default database is one in tmp_path."""
    path = tmp_path / "tuning.sqlite"
    monkeypatch.setenv("DPIA_TUNING_DB", str(path))
    return path


def _program(name: str):
    return load(f"{SEED}:{name}")[1]


def _store(db_path, program, sizes, derivation_text: str, time_s: float = 1e-6, params=None) -> None:
    key = device_key(choose_device())
    with TuningDB(db_path) as db:
        db.add(Candidate(canonical(program), sizes, key, derivation_text, "ok", time_s=time_s, run_id="test",
                         params=params or {}))


def _check(kernel, program, sizes, seed=0):
    inputs = random_inputs(program, sizes, seed)
    assert relative_error(kernel(*inputs), fl.interpret(program, *inputs)) <= 1e-4
    return inputs


def test_a_high_level_program_runs_the_default_variant_per_sizes():
    dot = _program("dot")
    kernel = dpia.compile(dot)
    assert isinstance(kernel, VariantKernel) and kernel.variant is None and kernel.source is None
    _check(kernel, dot, {"N": 4096})
    assert kernel.variant.kind == "default" and "no tuned variant" in kernel.variant.note
    assert "program: fun(xs: 4096.f32, ys: 4096.f32)" in kernel.variant.derivation  # sizes fixed
    first_source = kernel.source
    assert "kernel void" in first_source
    _check(kernel, dot, {"N": 100}, seed=1)  # other sizes: another variant, compiled once
    assert kernel.source != first_source
    assert kernel.time(*random_inputs(dot, {"N": 100}, 0), repeat=2) > 0
    assert kernel.bind(*random_inputs(dot, {"N": 100}, 0)).time(repeat=2) > 0
    assert len(kernel._by_sizes) == 2


def test_the_tuned_variant_is_replayed_from_the_database(private_db):
    total = _program("total")
    sizes = {"N": 2048}
    tuned_low, derivation = derive(fl.infer(fix_sizes(total, sizes)), S.global_reduce(128))
    _store(private_db, total, sizes, derivation.to_text())
    kernel = dpia.compile(total)
    _check(kernel, total, sizes)
    assert kernel.variant == Variant("tuned", derivation.to_text(), 1e-6, "test")
    assert kernel.source == dpia.compile(tuned_low).source
    _check(kernel, total, {"N": 1024})  # nothing stored for these sizes: the default
    assert kernel.variant.kind == "default"


def test_a_database_given_as_a_path_or_object_or_false(tmp_path):
    total = _program("total")
    other = tmp_path / "other.sqlite"
    _, derivation = derive(fl.infer(fix_sizes(total, {"N": 2048})), S.global_reduce(64))
    _store(other, total, {"N": 2048}, derivation.to_text())
    for db in (other, str(other)):
        kernel = dpia.compile(total, db=db)
        _check(kernel, total, {"N": 2048})
        assert kernel.variant.kind == "tuned"
    with TuningDB(other) as opened:
        kernel = dpia.compile(total, db=opened)
        _check(kernel, total, {"N": 2048})
        assert kernel.variant.kind == "tuned"
    kernel = dpia.compile(total, db=False)
    _check(kernel, total, {"N": 2048})
    assert kernel.variant.kind == "default"


def test_an_unusable_database_warns_and_runs_the_default(tmp_path):
    folder = tmp_path / "a_folder"
    folder.mkdir()
    kernel = dpia.compile(_program("scal"), db=folder)
    with pytest.warns(TuningWarning, match="tuning database not used: .*is a directory"):
        _check(kernel, _program("scal"), {"N": 64})
    assert kernel.variant.kind == "default"


def test_a_stored_derivation_that_no_longer_replays_warns_and_runs_the_default(private_db):
    total = _program("total")
    stale = "program: fun(xs: 2048.f32) => reduce (+) 0.0 xs\nstep: no_such_rule {} 0\n"
    _store(private_db, total, {"N": 2048}, stale)
    kernel = dpia.compile(total)
    with pytest.warns(TuningWarning, match="does not replay.*unknown rule 'no_such_rule'"):
        _check(kernel, total, {"N": 2048})
    assert kernel.variant.kind == "default" and "does not replay" in kernel.variant.note


def test_low_level_programs_compile_as_before():
    low, _ = derive(_program("scal"), S.scal_global())
    kernel = dpia.compile(low)
    assert isinstance(kernel, Kernel) and not hasattr(kernel, "variant")


def test_inputs_that_do_not_fit_are_reported():
    kernel = dpia.compile(_program("dot"))
    with pytest.raises(fl.InterpretError, match="takes 2 input"):
        kernel(np.ones(4, np.float32))
    with pytest.raises(fl.InterpretError, match="input ys"):
        kernel(np.ones(4, np.float32), np.ones(5, np.float32))


def test_choose_variant_without_sizes_is_the_generic_default():
    low, variant = choose_variant(_program("mm"))
    assert variant.kind == "default" and "fun(M: nat, K: nat, N: nat" in variant.derivation
    assert S.high_level_left(low) == []


def test_a_partly_lowered_program_compiles_as_written():
    m = fl.nat("M")
    partly = fl.fun([fl.array(m, fl.array(8, fl.f32))], lambda xss: fl.map_global(
        lambda r: fl.reduce_seq(fl.add, 0.0, r), fl.map(fl.map(fl.neg), xss)))
    assert S.high_level_left(partly)  # a high-level map is left, but the user lowered the rest by hand
    assert isinstance(dpia.compile(partly), Kernel)  # the translation takes it: a view of its rows


@pytest.mark.parametrize("text, outer", [
    ("fun(M: nat, K: nat, a: M.K.f32) => map (fun(r) => reduce_seq (+) 0.0 r) a", "map_global 0"),
    ("fun(M: nat, K: nat, a: M.K.f32) => generate M (fun(i) => reduce_seq (fun(acc, k) => acc + at (at a i) k) 0.0 "
     "(generate K (fun(k) => k)))", "map_global 0"),
    # parallel maps by hand inside: the host map takes a dimension they leave free, or a work-group
    ("fun(M: nat, K: nat, a: M.K.f32) => map (fun(r) => map_global 0 (fun(x) => x * x) r) a", "map_global 1"),
    ("fun(M: nat, K: nat, a: 3.M.K.f32) => map (fun(p) => map_global 0 (fun(r) => reduce_seq (+) 0.0 r) p) a",
     "map_global 1"),
    ("fun(M: nat, K: nat, a: M.K.f32) => map (fun(r) => reduce (+) 0.0 (to_local (map (fun(x) => x * x) r))) a",
     "map_workgroup 0"),
])
def test_a_partly_lowered_program_the_translation_refuses_is_completed_by_the_default_lowering(text, outer):
    """A fold by hand (reduce_seq: its accumulator may differ from its elements), a parallel map
    or local memory inside a map or generate the program leaves high level: the translation
    refuses it as it stands, so dpia.compile completes it as the explorer does, keeping what was
    written by hand (found by two bug hunts: dpia run refused what dpia explore ran; the
    completion put map_global 0 around map_global 0)."""
    program = fl.infer(fl.parse(text))
    kernel = dpia.compile(program, db=False)
    assert isinstance(kernel, VariantKernel)
    sizes = {"M": 5, "K": 9}
    _check(kernel, program, sizes)
    assert kernel.variant.kind == "default"
    low = Derivation.from_text(kernel.variant.derivation).replay()
    assert str(low).split("=> ", 1)[1].startswith(outer), str(low)


# ----------------------------------------------------------------------------------- presets


def test_a_size_generic_tuned_variant_is_compiled_at_the_input_sizes_where_the_explorer_timed_it_so(private_db):
    """The explorer stores derivations of the program with its sizes as variables; dpia.compile
    replays one and compiles it at the input sizes where the explorer timed it so
    (params["at_sizes"]: it agreed there with the size-generic kernel on the device), as the
    default is compiled: no size is a kernel argument, each parallel map is one guarded
    iteration per work-item (the size-generic kernel strides by the launch size: 2.3x slower
    on PoCL for a separable convolution), and it computes what the size-generic kernel does.
    A candidate the explorer timed size-generic is compiled size-generic."""
    from dpia.variants import at_sizes

    for name, generic_at_these_sizes in (("scal", False), ("dot", True)):
        program, sizes = _program(name), {"N": 4096}
        generic_low, derivation = derive(fl.infer(program), S.default_schedule(fl.infer(program)))
        assert "fun(N: nat" in derivation.to_text()  # size-generic: N a variable
        generic = dpia.compile(generic_low)
        for timed_at_sizes in (False, True):
            _store(private_db, program, sizes, derivation.to_text(), 1e-7 if timed_at_sizes else 1e-6,
                   {"at_sizes": True} if timed_at_sizes else {})  # the second, faster: the best
            kernel = dpia.compile(program)
            inputs = _check(kernel, program, sizes)
            assert kernel.variant.kind == "tuned" and "const int N" in generic.source
            assert relative_error(kernel(*inputs), generic(*inputs)) <= 1e-6
            if not timed_at_sizes:
                assert kernel.source == generic.source and not kernel.variant.at_sizes
            elif generic_at_these_sizes:  # dot's `take (32 * (N // 32768))` is `take 0` here: no type
                assert kernel.source == generic.source and "compiled size-generic" in kernel.variant.note
                assert not kernel.variant.at_sizes
            else:
                assert "const int N" not in kernel.source and "get_global_size" in generic.source
                assert "get_global_size" not in kernel.source and kernel.variant.at_sizes
                assert kernel.source == dpia.compile(at_sizes(generic_low, sizes)).source


def test_a_preset_that_fits_runs_before_the_default():
    """On a CPU device the naive mm gets the CPU shape measured on PoCL (mm_rows_vectorized)
    when the sizes fit it; sizes it does not divide get the default."""
    mm = _program("mm")
    kernel = dpia.compile(mm, db=False)
    a, b = random_inputs(mm, {"M": 16, "K": 8, "N": 32}, 0)
    assert relative_error(kernel(a, b), a @ b) < 1e-5
    assert kernel.variant.kind == "preset" and "mm_rows_vectorized" in kernel.variant.note
    width = kernel.variant.note.split("width=")[1].split(")")[0]  # 16 on a 16-lane CPU, else 8
    assert f"float{width}" in kernel.source
    a, b = random_inputs(mm, {"M": 6, "K": 5, "N": 7}, 0)
    assert relative_error(kernel(a, b), a @ b) < 1e-5
    assert kernel.variant.kind == "default"


def test_presets_follow_the_kind_of_device_and_its_limits():
    from dpia.explore.presets import preset_for
    from dpia.explore.space import DeviceLimits

    gpu = DeviceLimits(max_work_group_size=1024, local_mem_bytes=48 * 1024, compute_units=132, device_type="GPU")
    cpu = DeviceLimits(max_work_group_size=4096, local_mem_bytes=512 * 1024, compute_units=2)
    mm, total = _program("mm"), _program("total")
    big = {"M": 4096, "N": 4096, "K": 4096}

    def strategy(program, sizes, limits):
        found = preset_for(program, sizes, limits)
        return None if found is None else found[0].strategy_name

    assert strategy(mm, big, gpu) == "mm_register_blocked"
    assert strategy(mm, big, cpu) == "mm_rows_vectorized"
    assert strategy(mm, {"M": 256, "N": 256, "K": 64}, gpu) is None  # 4 work-groups for 132 compute units
    assert strategy(total, {"N": 1 << 28}, gpu) == "parallel_reduce_two_stage"
    assert strategy(total, {"N": 1 << 26}, cpu) == "chunked_sum"
    assert strategy(total, {"N": 1000}, cpu) is None  # not a multiple of the chunk


def test_the_stored_variant_wins_over_a_preset(private_db):
    mm = _program("mm")
    sizes = {"M": 16, "K": 8, "N": 32}
    _, derivation = derive(fix_sizes(mm, sizes), S.default_schedule())
    _store(private_db, mm, sizes, derivation.to_text())
    kernel = dpia.compile(mm)
    a, b = random_inputs(mm, sizes, 0)
    assert relative_error(kernel(a, b), a @ b) < 1e-5 and kernel.variant.kind == "tuned"


def test_a_preset_maps_its_roles_to_the_programs_own_size_names():
    """mm's rows named N and its columns M: the preset's facts follow the roles, not the names."""
    rows, k, cols = fl.nat("N"), fl.nat("K"), fl.nat("M")
    mm = fl.fun([fl.array(rows, fl.array(k, fl.f32)), fl.array(k, fl.array(cols, fl.f32))],
                lambda a, b: fl.map(lambda r: fl.map(lambda c: fl.reduce(fl.add, 0.0, fl.map(
                    lambda p: fl.fst(p) * fl.snd(p), fl.zip(r, c))), fl.transpose(b)), a))
    kernel = dpia.compile(mm, db=False)
    a, b = random_inputs(mm, {"N": 8, "K": 8, "M": 32}, 0)
    assert relative_error(kernel(a, b), a @ b) < 1e-5 and kernel.variant.kind == "preset"


# --------------------------------------------------------------- verified stored variants


def test_a_stored_derivation_of_another_program_is_refused(private_db):
    """A row keyed by `total` whose derivation starts from another program (here: the sum of
    the absolute values) would run that program: refused with a TuningWarning, the default runs."""
    total, asum = _program("total"), _program("asum")
    sizes = {"N": 2048}
    _, foreign = derive(fl.infer(fix_sizes(asum, sizes)), S.default_schedule())
    _store(private_db, total, sizes, foreign.to_text())
    kernel = dpia.compile(total)
    with pytest.warns(TuningWarning, match="refused: the stored derivation is not for this program"):
        _check(kernel, total, sizes)
    assert kernel.variant.kind == "default" and "refused" in kernel.variant.note


def _clamped_sum(c_body: str):
    clamp = fl.user_fun("clamp01", [("x", fl.f32)], fl.f32, c_body, numpy=lambda x: np.clip(x, 0.0, 1.0))
    n = fl.nat("N")
    return fl.infer(fl.fun([fl.array(n, fl.f32)], lambda xs: fl.reduce(fl.add, 0.0, fl.map(clamp, xs))))


def test_a_stored_user_function_body_that_differs_is_refused(private_db):
    """The C body of a user function comes from the program being compiled, never from a row:
    a row whose derivation carries another body (code that would be injected) is refused."""
    honest = _clamped_sum("return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x);")
    injected = _clamped_sum("return 42.0f; } kernel void evil(global float* p) { p[0] = 1.0f;")
    sizes = {"N": 256}
    _, foreign = derive(fl.infer(fix_sizes(injected, sizes)), S.default_schedule())
    _store(private_db, honest, sizes, foreign.to_text())
    kernel = dpia.compile(honest)
    with pytest.warns(TuningWarning, match="not for this program.*return 42.0f"):
        _check(kernel, honest, sizes)
    assert kernel.variant.kind == "default" and "evil" not in kernel.source


def test_a_stored_user_function_with_the_same_body_replays_with_the_programs_meaning(private_db):
    program = _clamped_sum("return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x);")
    sizes = {"N": 256}
    _, derivation = derive(fl.infer(fix_sizes(program, sizes)), S.default_schedule())
    _store(private_db, program, sizes, derivation.to_text())
    kernel = dpia.compile(program)
    _check(kernel, program, sizes)
    assert kernel.variant.kind == "tuned"


def test_stronger_size_facts_must_hold_at_the_sizes(private_db):
    """Explorations derive from the program re-declared with the facts a candidate needs
    (N a multiple of 256); a row claiming such a derivation for sizes that contradict the
    facts is refused."""
    from dpia.explore.space import with_size_facts

    total = _program("total")
    declared = fl.infer(with_size_facts(total, {"N": 256}))
    _, derivation = derive(declared, S.global_reduce(256))
    _store(private_db, total, {"N": 2048}, derivation.to_text())
    _store(private_db, total, {"N": 1000}, derivation.to_text())
    kernel = dpia.compile(total)
    _check(kernel, total, {"N": 2048})
    assert kernel.variant.kind == "tuned"
    with pytest.warns(TuningWarning, match="assumes what these sizes contradict"):
        _check(kernel, total, {"N": 1000})
    assert kernel.variant.kind == "default"


def test_a_baseline_row_says_it_is_the_default_lowering(private_db):
    total = _program("total")
    sizes = {"N": 2048}
    _, derivation = derive(fl.infer(fix_sizes(total, sizes)), S.default_schedule())
    key = device_key(choose_device())
    with TuningDB(private_db) as db:
        db.add(Candidate(canonical(total), sizes, key, derivation.to_text(), "ok", time_s=1e-6,
                         params={"baseline": True}))
    kernel = dpia.compile(total)
    _check(kernel, total, sizes)
    assert kernel.variant.kind == "tuned" and "the default lowering" in kernel.variant.note


def test_a_parallel_map_by_hand_that_a_fold_in_another_items_code_reads_is_refused_saying_why():
    """`generate 5 (fun(i) => reduce (+) 0 (map_global 0 ... x))`: the completion makes the
    generate map_global 1; each of its items would fold what every item of dimension 0 wrote,
    across work-groups, and no barrier in one kernel waits for them all."""
    program = fl.infer(fl.parse("fun(N: nat, x: N.f32) => generate 5 (fun(i) => reduce (+) 0.0 (map_global 0 "
                                "(fun(v) => v * cast f32 i) x))"))
    kernel = dpia.compile(program, db=False)
    with pytest.raises(dpia.TranslationError, match=r"map_global 0 writes an array inside map_global 1's function "
                                                    r".*no barrier in one kernel waits for them"):
        kernel(np.ones(64, np.float32))
