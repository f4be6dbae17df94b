"""Derivations: the record of a rewrite as text, read back and replayed.

* `to_text` / `from_text` round-trip (program, rule names, parameters, paths), for a step
  of every rule in the catalogue and for symbolic parameters such as `N / 4`.
* `replay` reproduces the strategy's result.
* Edited text that no longer fits (unknown rule, a path that does not exist, a step that
  does not apply, wrong parameters, another program) raises StrategyError naming the first
  failing step; malformed text raises ParseError naming the line.
* Parameters are read as sizes by the program parser, never evaluated as Python.
"""

from __future__ import annotations

import builtins
import json
import zlib

import numpy as np
import pytest

import functional as fl
from functional.derivation import Derivation, derive
from functional.errors import ParseError, StrategyError
from functional.nat import Nat
from functional.rules import RULES
from functional.strategies import argument, body, fmap, normalize, top_down
from functional.types import array, f32

N = fl.nat("N", multiple_of=4)


def program():
    return fl.fun([array(N, f32)], lambda xs: fl.map(fl.neg, fl.map(lambda x: x * 2.0, xs)))


def strategy():
    r = RULES
    return (top_down(r["map_fusion"].strategy()) >> top_down(r["split_join"].strategy(n=4))
            >> body(body(argument(fmap(top_down(r["lower_map_global"].strategy(d=1)))))))


@pytest.fixture(scope="module")
def derived():
    return derive(program(), strategy())


def test_text_form(derived):
    _, d = derived
    lines = d.to_text().splitlines()
    assert lines[0] == f"program: {program()}"
    assert lines[1:] == [
        'step: map_fusion {} 0.0',
        'step: split_join {"n": "4"} 0.0',
        'step: lower_map_global {"d": "1"} 0.0.1.0.1',
    ]
    assert str(d).splitlines()[1:] == ["  1. map_fusion() at 0.0", "  2. split_join(n=4) at 0.0",
                                       "  3. lower_map_global(d=1) at 0.0.1.0.1"]


def test_round_trip_and_replay(derived):
    result, d = derived
    text = d.to_text()
    back = Derivation.from_text(text)
    assert back == d
    assert back.to_text() == text
    assert back.steps == d.steps and all(isinstance(v, Nat) for s in back.steps for _, v in s.params)
    assert back.replay() == result
    assert d.replay() == result
    x = np.linspace(-2, 2, 16, dtype=np.float32)
    np.testing.assert_array_equal(fl.interpret(back.replay(), x), fl.interpret(program(), x))
    # blank lines are ignored
    assert Derivation.from_text("\n" + text.replace("\n", "\n\n")) == d


def test_root_path_and_empty_derivation():
    p = fl.fun([f32], lambda x: x + 1.0)
    d = Derivation(p, ())
    assert d.to_text() == f"program: {p}\n"
    assert Derivation.from_text(d.to_text()) == d
    assert d.replay() == p
    redex = fl.apply(fl.lam(lambda y: y * 2.0), 3.0)
    result, d = derive(redex, RULES["beta"].strategy())
    assert d.to_text().splitlines()[1] == "step: beta {} root"
    assert Derivation.from_text(d.to_text()).replay() == result


def test_symbolic_parameters_keep_the_program_size_facts():
    """`split_join(n = N / 4)` needs N's fact `multiple_of=4` when read back."""
    p = fl.fun([array(N, f32)], lambda xs: fl.map(fl.neg, xs))
    result, d = derive(p, top_down(RULES["split_join"].strategy(n=N / 4)))
    text = d.to_text()
    assert '{"n": "N / 4"}' in text
    back = Derivation.from_text(text)
    assert back == d
    assert back.replay() == result


def _rng(name: str) -> np.random.Generator:
    return np.random.default_rng([zlib.crc32(name.encode()), 7])


@pytest.mark.parametrize("name", sorted(RULES))
def test_every_rule_step_round_trips(name):
    """A step of each rule, on its own random instance, survives the text form and replays."""
    r = RULES[name]
    prog, _, params = r.example(_rng(name))
    result, d = derive(prog, top_down(r.strategy(**params)))
    back = Derivation.from_text(d.to_text())
    assert back.steps == d.steps
    assert back.program == prog
    assert back.replay() == result


# --------------------------------------------------------------------- edited derivations


def edited(d: Derivation, line: int, new: str) -> str:
    lines = d.to_text().splitlines()
    lines[line] = new
    return "\n".join(lines) + "\n"


def replay_error(text: str) -> str:
    d = Derivation.from_text(text)
    with pytest.raises(StrategyError) as info:
        d.replay()
    return str(info.value)


def test_unknown_rule(derived):
    _, d = derived
    msg = replay_error(edited(d, 2, 'step: split_joint {"n": "4"} 0.0'))
    assert msg.startswith("step 2: unknown rule 'split_joint'")


def test_path_that_does_not_exist(derived):
    _, d = derived
    msg = replay_error(edited(d, 3, 'step: lower_map_global {"d": "1"} 0.0.1.0.1.0.0.0.0.0'))
    assert msg.startswith("step 3 ") and "the path does not exist" in msg
    msg = replay_error(edited(d, 1, "step: map_fusion {} 0.0.7"))
    assert msg.startswith("step 1 ") and "the path does not exist" in msg


def test_step_that_does_not_apply(derived):
    _, d = derived
    msg = replay_error(edited(d, 2, 'step: split_join {"n": "3"} 0.0'))
    assert msg.startswith("step 2 (split_join(n=3) at 0.0) does not apply: split_join: 3 does not divide")
    msg = replay_error(edited(d, 1, "step: map_fusion {} 0"))  # a real place, but not a fusion
    assert msg.startswith("step 1 (map_fusion() at 0) does not apply: map_fusion: does not match")


def test_the_first_failing_step_is_named(derived):
    _, d = derived
    text = edited(d, 2, "step: nope {} 0.0")
    text = edited(Derivation.from_text(text), 3, "step: nope_either {} 0.0")
    assert replay_error(text).startswith("step 2: unknown rule 'nope'")


def test_wrong_parameters(derived):
    _, d = derived
    msg = replay_error(edited(d, 2, 'step: split_join {"m": "4"} 0.0'))
    assert msg.startswith("step 2 (split_join(m=4) at 0.0): rule split_join has no parameter(s) ['m']")
    msg = replay_error(edited(d, 2, "step: split_join {} 0.0"))
    assert msg.startswith("step 2 (split_join() at 0.0): rule split_join needs parameter(s) ['n']")


def test_replayed_on_another_program(derived):
    _, d = derived
    other = fl.fun([array(N, f32)], lambda xs: fl.reduce(fl.add, 0.0, fl.map(fl.neg, xs)))
    msg = replay_error(edited(d, 0, f"program: {other}"))
    assert msg.startswith("step 1 (map_fusion() at 0.0) does not apply")
    # a program where the first steps still apply and a later one does not
    odd = fl.fun([array(fl.nat("M", multiple_of=2), f32)], lambda xs: fl.map(fl.neg, fl.map(lambda x: x * 2.0, xs)))
    msg = replay_error(edited(d, 0, f"program: {odd}"))
    assert msg.startswith("step 2 (split_join(n=4) at 0.0) does not apply")


def test_derive_failure():
    with pytest.raises(StrategyError, match="applies nowhere"):
        derive(program(), normalize(RULES["map_fusion"].strategy()) >> top_down(RULES["map_fusion"].strategy()))


# ---------------------------------------------------------------------------- malformed


@pytest.mark.parametrize("text, needle", [
    ("", "starts with 'program: '"),
    ("step: beta {} root\n", "starts with 'program: '"),
    ("program fun(x: f32) => x\n", "starts with 'program: '"),
    ("program: fun(x: f32) => x +\n", "expected"),
    ("program: fun(x: f32) => x\nstep beta {} root\n", "expected 'step: RULE {params} PATH'"),
    ("program: fun(x: f32) => x\nstep: beta\n", "malformed step"),
    ("program: fun(x: f32) => x\nstep: beta {}\n", "malformed step"),
    ("program: fun(x: f32) => x\nstep: beta {\"n\": \"4\"\n", "malformed step"),
    ("program: fun(x: f32) => x\nstep: beta [1] root\n", "parameters are a JSON object"),
    ("program: fun(x: f32) => x\nstep: beta {\"n\": 4} root\n", "parameter values are text"),
    ("program: fun(x: f32) => x\nstep: beta {\"n\": \"4 +\"} root\n", "malformed step"),
    ("program: fun(x: f32) => x\nstep: beta {\"n\": \"4 4\"} root\n", "is not a size"),
    ("program: fun(x: f32) => x\nstep: beta {} 0.-1\n", "a path is 'root' or child indices"),
    ("program: fun(x: f32) => x\nstep: beta {} 0..1\n", "a path is 'root' or child indices"),
    ("program: fun(x: f32) => x\nstep: beta {} here\n", "a path is 'root' or child indices"),
])
def test_malformed_text(text, needle):
    with pytest.raises(ParseError) as info:
        Derivation.from_text(text)
    assert needle in str(info.value)


def test_malformed_step_names_its_line():
    text = "program: fun(x: f32) => x\nstep: beta {} root\n\nstep: beta {} -1\n"
    with pytest.raises(ParseError, match="^line 3: "):
        Derivation.from_text(text)


# ------------------------------------------------------------------- parameters are sizes


@pytest.mark.parametrize("text, value", [
    ("4", 4), ("2*3", 6), ("2^3", 8), ("(7 + 5) / 3", 4), ("min(3, 9)", 3), ("17 // 5", 3), ("17 % 5", 2),
])
def test_parameters_are_sizes(text, value):
    d = Derivation.from_text(f'program: fun(x: f32) => x\nstep: split_join {{"n": "{text}"}} root\n')
    [(name, n)] = d.steps[0].params
    assert name == "n" and isinstance(n, Nat) and n == Nat.const(value)


@pytest.mark.parametrize("text", [
    "__import__('os').system('touch /tmp/derivation-was-evaluated')",
    "open('/etc/passwd').read()",
    "4 if True else 2",
    "lambda: 4",
    "[4]",
    "'4'",
    "4.0",
])
def test_parameters_are_never_evaluated(text, monkeypatch):
    payload = json.dumps({"n": text})

    def boom(*args, **kwargs):
        raise AssertionError("Python code was evaluated")

    for name in ("eval", "exec", "compile"):
        monkeypatch.setattr(builtins, name, boom)
    with pytest.raises(ParseError, match="malformed step"):
        Derivation.from_text(f"program: fun(x: f32) => x\nstep: split_join {payload} root\n")


def test_a_size_variable_parameter_is_a_variable_not_a_python_name():
    d = Derivation.from_text('program: fun(x: f32) => x\nstep: split_join {"n": "open"} root\n')
    [(_, n)] = d.steps[0].params
    assert isinstance(n, Nat) and str(n) == "open" and n.as_int() is None


# ------------------------------------------------------------------ hostile derivation text


@pytest.mark.parametrize("text, needle", [
    ("program: fun(x) => x\nstep: r " + "[" * 100_000 + "]" * 100_000 + " root", "nested too deeply"),
    ('program: fun(x) => x\nstep: r {"n": ' + "[" * 100_000 + "]" * 100_000 + "} root", "nested too deeply"),
    ('program: fun(x) => x\nstep: r {"n": "' + "(" * 100_000 + "4" + ")" * 100_000 + '"} root', "nested too deeply"),
    ('program: fun(x) => x\nstep: r {"n": "' + "9" * 5000 + '"} root', "too long"),
    ("program: fun(x) => x\nstep: r {} " + "9" * 5000, "malformed step"),
    ("program: split " + "9" * 5000 + " xs", "too long"),
])
def test_hostile_derivation_text_is_a_parse_error(text, needle):
    with pytest.raises(ParseError, match=needle) as info:
        Derivation.from_text(text)
    assert len(str(info.value)) < 600  # the offending line is excerpted, not repeated whole


def test_a_derivation_is_text():
    with pytest.raises(ParseError, match="bytes"):
        Derivation.from_text(b"program: fun(x) => x\n")
