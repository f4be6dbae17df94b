"""Programs as the command line and the tuning database see them: loaded from files, keyed by
a canonical text, given concrete sizes and random inputs, checked, and measured.

    name, program = load("examples/seed.py:dot")     # FILE[:NAME]; .py imported, .dpia/.txt parsed
    sizes = parse_sizes(["N=1048576"], program)      # checked against the program's size facts
    key = canonical(program)                         # the tuning database's program key
    fixed = fix_sizes(program, sizes)                # the sizes as constants (no size binders left)
    inputs = random_inputs(program, sizes, seed=0)   # never zeros
    error = relative_error(kernel(*inputs), interpret(program, *inputs))   # ok when <= TOLERANCE

`canonical(program)` is the text (functional.syntax) of the typed program with its value
binders renamed x0, x1, ... in binding order, so programs equal up to renaming share one key;
size variables keep their names (sizes are given by name) and their facts.
"""

from __future__ import annotations

import importlib.util
import math
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path

import attrs
import numpy as np

from functional.errors import FunctionalError, NatError
from functional.expr import (App, Expr, Identifier, Lambda, NatApp, NatLambda, Prim, free_identifiers, spine,
                             substitute_nat, walk)
from functional.infer import constant_index, infer
from functional.interp import layout
from functional.nat import Nat, Var, evaluate
from functional.syntax import parse, to_text
from functional.types import ArrayType, FunType, ScalarType

TEXT_SUFFIXES = (".dpia", ".txt")
NEGATIVE_SHARE = 0.25  # of the random float inputs
TOLERANCE = 1e-4  # largest relative difference from the interpreter (as examples/seed.py and the tests)


class ProgramLoadError(FunctionalError):
    """A FILE[:NAME] that names no program: a missing file, an unknown name, a file without
    programs, or one that does not import, parse or type."""


class SizeSpecError(FunctionalError):
    """A --size NAME=VALUE that is malformed, names no size of the program, or contradicts
    the program's facts or types."""


# ------------------------------------------------------------------------- the program key


def canonical(program: Expr) -> str:
    """The program's key: its text with value binders renamed x0, x1, ... (binding order)."""
    typed = program if program.t is not None else infer(program)
    return to_text(_rename_binders(typed, {}, [0]))


def _rename_binders(e: Expr, names: dict, counter: list) -> Expr:
    if isinstance(e, Identifier):
        return attrs.evolve(e, name=names.get(e.name, e.name))
    if isinstance(e, Lambda):
        new = f"x{counter[0]}"
        counter[0] += 1
        body = _rename_binders(e.body, {**names, e.param.name: new}, counter)
        return attrs.evolve(e, param=attrs.evolve(e.param, name=new), body=body)
    if isinstance(e, App):
        return attrs.evolve(e, fun=_rename_binders(e.fun, names, counter), arg=_rename_binders(e.arg, names, counter))
    if isinstance(e, (NatLambda, NatApp)):
        return attrs.evolve(e, **{"body" if isinstance(e, NatLambda) else "fun":
                                  _rename_binders(e.children()[0], names, counter)})
    return e


def user_functions(program: Expr) -> dict[str, object]:
    """{name: NumPy meaning} of the program's user functions, for parsing a text of it."""
    from functional.expr import UserFun, walk

    return {p.name: p.numpy for x in walk(program) if isinstance(x, Prim)
            for p in x.params if isinstance(p, UserFun)}


def differs_at(candidate: Expr, program: Expr, sizes: Mapping[str, int]) -> str | None:
    """Why `candidate` (a stored derivation's program) is not `program` at `sizes`; None when
    it is: the size facts `candidate` assumes hold at `sizes`, and the canonical forms of
    both are equal once `sizes` are fixed in them.  (Explorations derive from the program
    re-declared with stronger facts, or with its sizes fixed, so those may differ.)  User
    functions are compared whole, C body and signature: they are part of the text."""
    for v in size_vars(candidate):
        if v.name in sizes:
            try:
                _check_facts(v, sizes[v.name], sizes)
            except SizeSpecError as exc:
                return f"it assumes what these sizes contradict ({exc.message})"
    try:
        got = canonical(fix_sizes(candidate, sizes))
    except FunctionalError as exc:
        return f"it does not type at these sizes ({exc})"
    want = canonical(fix_sizes(program, sizes))
    return None if got == want else f"it is the program {_shortened(got)}, not {_shortened(want)}"


def _shortened(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


# ------------------------------------------------------------------------------- loading


def load(spec: str) -> tuple[str, Expr]:
    """The program FILE[:NAME] names, typed.  A .py file is imported and its module-level
    programs (`fun` values) are the candidates: NAME picks one, and without NAME the file
    must hold exactly one.  A .dpia or .txt file holds one program in the text syntax, named
    after the file."""
    path, name = split_spec(spec)
    if not path.exists():
        raise ProgramLoadError(f"no such file: {path}")
    if path.is_dir():
        raise ProgramLoadError(f"{path} is a directory, not a program file")
    programs = _python_programs(path) if path.suffix == ".py" else _text_program(path)
    if not programs:
        raise ProgramLoadError(f"{path} defines no program (a module-level value built with functional.fun)")
    chosen = _choose(programs, name, path)
    try:
        return chosen, infer(programs[chosen])
    except FunctionalError as exc:
        raise ProgramLoadError(f"program {chosen} in {path} does not type: {exc}") from None


def split_spec(spec: str) -> tuple[Path, str | None]:
    """FILE or FILE:NAME (a file whose own name contains ':' is taken whole when it exists)."""
    head, sep, tail = spec.rpartition(":")
    if sep and head and re.fullmatch(r"[A-Za-z_][A-Za-z_0-9]*", tail) and not Path(spec).exists():
        return Path(head), tail
    return Path(spec), None


def _choose(programs: dict, name: str | None, path: Path) -> str:
    known = ", ".join(sorted(programs))
    if name is None:
        if len(programs) > 1:
            raise ProgramLoadError(f"{path} defines {len(programs)} programs; choose one with {path}:NAME "
                                   f"(the programs: {known})")
        return next(iter(programs))
    if name not in programs:
        raise ProgramLoadError(f"{path} defines no program {name!r}; the programs: {known}")
    return name


def _python_programs(path: Path) -> dict[str, Expr]:
    module = _import_file(path)
    return {name: value for name, value in vars(module).items()
            if not name.startswith("_") and isinstance(value, (Lambda, NatLambda))}


def _import_file(path: Path):
    """Import a .py file from its path, as a module of its own name (not put in sys.modules);
    its folder is importable while it runs, so it can import its neighbours."""
    module_name = "dpia_program_" + re.sub(r"\W", "_", path.stem)
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ProgramLoadError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    folder = str(path.resolve().parent)
    sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the user's file: any error it raises is a load error, with its text
        raise ProgramLoadError(f"importing {path} failed: {type(exc).__name__}: {exc}") from exc
    finally:
        if folder in sys.path:
            sys.path.remove(folder)
    return module


def _text_program(path: Path) -> dict[str, Expr]:
    text = path.read_text()
    if not text.strip():
        return {}
    try:
        return {re.sub(r"\W", "_", path.stem): parse(text)}
    except FunctionalError as exc:
        raise ProgramLoadError(f"{path} does not parse: {exc}") from None


# --------------------------------------------------------------------------------- sizes


def size_vars(program: Expr) -> list[Var]:
    """The program's size variables (its leading size binders), outermost first."""
    out, e = [], program
    while isinstance(e, NatLambda):
        out.append(e.var)
        e = e.body
    return out


def parse_sizes(specs, program: Expr | None = None, complete: bool = False) -> dict[str, int]:
    """{"N": 1048576, ...} from ["N=1048576", ...].  With `program`: each name must be one
    of its size variables, each value must satisfy that variable's facts (lo, hi,
    multiple_of), and a complete set of sizes must type the program with the sizes fixed;
    `complete` asks for every size variable."""
    sizes: dict[str, int] = {}
    for spec in specs or ():
        name, value = _one_size(spec)
        if name in sizes and sizes[name] != value:
            raise SizeSpecError(f"size {name} given twice ({sizes[name]} and {value})")
        sizes[name] = value
    if program is not None:
        _check_against(program, sizes, complete)
    return sizes


def _one_size(spec: str) -> tuple[str, int]:
    m = re.fullmatch(r"\s*([A-Za-z_][A-Za-z_0-9]*)\s*=\s*(\S+)\s*", spec)
    if m is None:
        raise SizeSpecError(f"expected NAME=VALUE (e.g. N=1048576), got {spec!r}")
    try:
        value = int(m.group(2).replace("_", ""), 0)
    except ValueError:
        value = _power_of_two(m.group(2))
    if value is None:
        raise SizeSpecError(f"size {m.group(1)}: expected an integer (e.g. 1048576, 2^20), got "
                            f"{_shortened(m.group(2), 40)!r}")
    if value.bit_length() > MAX_SIZE_BITS:
        raise SizeSpecError(f"size {m.group(1)}: {_shortened(m.group(2), 40)} is too large (sizes are below "
                            f"2^{MAX_SIZE_BITS})")
    return m.group(1), value


MAX_SIZE_BITS = 63  # sizes are C longs in the kernels


def _power_of_two(text: str) -> int | None:
    m = re.fullmatch(r"(\d{1,20})\^(\d{1,20})", text)
    if m is None:
        return None
    base, exponent = int(m.group(1)), int(m.group(2))
    if base > 1 and (base.bit_length() - 1) * exponent > MAX_SIZE_BITS:
        return 1 << (MAX_SIZE_BITS + 1)  # refused by the caller, without computing 2^99999999
    return base ** exponent


def _check_against(program: Expr, sizes: dict, complete: bool) -> None:
    variables = {v.name: v for v in size_vars(program)}
    known = ", ".join(variables) or "none"
    unknown = [n for n in sizes if n not in variables]
    if unknown:
        raise SizeSpecError(f"the program has no size {', '.join(unknown)}; its sizes: {known}")
    missing = [n for n in variables if n not in sizes]
    if complete and missing:
        raise SizeSpecError(f"missing size {', '.join(missing)}: give --size {missing[0]}=VALUE for each "
                            f"(the program's sizes: {known})")
    for name, value in sizes.items():
        _check_facts(variables[name], value, sizes)
    if not missing:
        try:
            infer(fix_sizes(program, sizes))
        except FunctionalError as exc:
            raise SizeSpecError(f"the sizes {_sizes_text(sizes)} contradict the program's types: {exc}") from None


def _check_facts(v: Var, value: int, sizes: dict) -> None:
    if value < max(v.lo, 1):
        raise SizeSpecError(f"size {v.name} = {value}: must be at least {max(v.lo, 1)}")
    if v.multiple_of != 1 and value % v.multiple_of:
        raise SizeSpecError(f"size {v.name} = {value}: the program says it is a multiple of {v.multiple_of}")
    if v.hi is not None and all(x.name in sizes for x in v.hi.vars):
        bound = int(evaluate(v.hi, sizes))
        if value >= bound:
            raise SizeSpecError(f"size {v.name} = {value}: the program says it is below {v.hi} (= {bound})")


def _sizes_text(sizes: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in sizes.items())


def fix_sizes(program: Expr, sizes: dict) -> Expr:
    """The program with the given size variables replaced by constants and their binders
    dropped (untyped: infer it again).  Strategies can then split by any divisor of a length."""
    if isinstance(program, NatLambda):
        body = fix_sizes(program.body, sizes)
        if program.var.name in sizes:
            return substitute_nat(body, program.var, Nat.const(sizes[program.var.name]))
        return attrs.evolve(program, body=body, t=None)
    return program



def at_sizes(low: Expr, sizes: Mapping[str, int]) -> Expr:
    """A lowered program at these sizes: its size binders and its inputs' size variables
    replaced by the values, typed (correct wherever the size-generic program is: the sizes
    satisfy its facts).  FunctionalError where a length the sizes make zero is no type
    (`take (32 * (N // 32768))` at N = 4096)."""
    from functional.rules.vocabulary import specialise

    return infer(specialise(low, dict(sizes)))


# --------------------------------------------------------------------------- inputs


def signature(program: Expr) -> tuple[list[tuple[str, object]], object]:
    """[(name, type)] of the program's inputs and its result type (typed program)."""
    typed = program if program.t is not None else infer(program)
    body = typed
    while isinstance(body, NatLambda):
        body = body.body
    params, t = [], body.t
    while isinstance(t, FunType):
        name = body.param.name if isinstance(body, Lambda) else f"#{len(params) + 1}"
        params.append((name, t.param))
        body = body.body if isinstance(body, Lambda) else body
        t = t.result
    return params, t


def input_shapes(program: Expr, sizes: Mapping[str, int]) -> tuple:
    """The program's inputs at `sizes` as nested tuples of (shape, scalar name) leaves: equal
    for two programs exactly when `random_inputs` makes the same values for both."""
    def shaped(lay):
        if isinstance(lay, tuple):
            return tuple(shaped(sub) for sub in lay)
        return tuple(int(evaluate(d, sizes)) for d in lay.dims), lay.scalar.name

    return tuple(shaped(layout(t)) for _, t in signature(program)[0])


def data_bytes(program: Expr, sizes: Mapping[str, int]) -> int:
    """Bytes of the program's inputs and result at `sizes` (Python integers: never overflows)."""
    params, result = signature(program)
    total = 0
    for t in [t for _, t in params] + [result]:
        for leaf in layout_leaves(layout(t)):
            total += math.prod(int(evaluate(d, sizes)) for d in leaf.dims) * np.dtype(leaf.scalar.dtype).itemsize
    return total


def physical_memory_bytes() -> int | None:
    """This machine's memory, or None where the system does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def check_fits_in_memory(program: Expr, sizes: Mapping[str, int], memory: int | None = None) -> None:
    """SizeSpecError when the inputs and result at `sizes` cannot fit in `memory` bytes (default:
    this machine's), so that a command refuses in one line instead of failing with a MemoryError."""
    memory = physical_memory_bytes() if memory is None else memory
    needed = data_bytes(program, sizes)
    if memory is not None and needed > memory:
        raise SizeSpecError(f"the sizes {_sizes_text(sizes)} need {_gib(needed)} for the inputs and the result; "
                            f"this machine has {_gib(memory)} of memory")


def _gib(count: int) -> str:
    return f"{count / 2**30:.3g} GiB"


def layout_leaves(lay):
    """The array leaves of a layout (functional.interp.layout), tuples flattened in order."""
    if isinstance(lay, tuple):
        for sub in lay:
            yield from layout_leaves(sub)
    else:
        yield lay


def random_inputs(program: Expr, sizes: Mapping[str, int], seed: int = 0) -> tuple:
    """One random value per input of the program, shaped by `sizes`: floats of magnitude
    0.5 to 1.5, a quarter of them negative, integers 1 to 9, random booleans; never zero, so
    a kernel that drops a term or writes nothing does not pass by accident."""
    rng = np.random.default_rng(seed)
    return tuple(_random_value(layout(t), sizes, rng) for _, t in signature(program)[0])


def timing_inputs(program: Expr, sizes: Mapping[str, int], seed: int = 0) -> tuple:
    """random_inputs for timing a kernel, not for checking it: integers drawn from 0 up to
    `index_range` where the program reads an array at a computed index, so gathers spread
    over memory as real indices do (kernels clamp every such index into its array).  With
    random_inputs' 1 to 9, every MD neighbour is one of nine atoms and every gather hits
    the cache: the explorer timed MD at 0.224 ms, which runs at 0.391 ms on real inputs."""
    top = index_range(program, sizes)
    rng = np.random.default_rng(seed)
    return tuple(_random_value(layout(t), sizes, rng, top) for _, t in signature(program)[0])


def index_range(program: Expr, sizes: Mapping[str, int]) -> int | None:
    """The shortest array that `program` reads at an index computed from its data (`at xs
    i`, i neither a literal, a size, nor only `generate`'s own counters), its length at
    `sizes`; None where there is none.  Lengths that depend on a bound size (inside a nat
    lambda) are left out."""
    typed = program if program.t is not None else infer(program)
    counters = {a.param.name for e in walk(typed) for head, args in [spine(e)]
                if isinstance(head, Prim) and head.name == "generate" for a in args if isinstance(a, Lambda)}
    lengths = []
    for e in walk(typed):
        head, args = spine(e)
        if (isinstance(head, Prim) and head.name == "at" and len(args) == 2 and constant_index(args[1]) is None
                and free_identifiers(args[1]) - counters and isinstance(args[0].t, ArrayType)):
            try:
                lengths.append(int(evaluate(args[0].t.size, dict(sizes))))
            except NatError:  # a length of a size bound inside (a nat lambda's): no value here
                continue
    return min(lengths) if lengths else None


def _random_value(lay, sizes: dict, rng: np.random.Generator, index_top: int | None = None):
    if isinstance(lay, tuple):
        return tuple(_random_value(sub, sizes, rng, index_top) for sub in lay)
    shape = tuple(int(evaluate(d, sizes)) for d in lay.dims)
    values = _random_scalars(lay.scalar, shape, rng, index_top)
    return values[()] if not shape else values


def _random_scalars(scalar: ScalarType, shape: tuple, rng: np.random.Generator,
                    index_top: int | None = None) -> np.ndarray:
    if scalar.name == "bool":
        return rng.random(shape) < 0.5
    if scalar.is_float:
        # A quarter negative: sign errors show, and sums do not cancel to a small total that
        # would make float32 rounding look like a wrong result.
        # Drawn in single precision where that is the type and negated in place: two
        # 4096x4096 matrices in 0.5 s, not 1.5 s (exploration makes them once per worker).
        draw = np.float32 if scalar.dtype == np.float32 else np.float64
        values = rng.random(shape, dtype=draw)
        values += draw(0.5)
        np.negative(values, out=values, where=rng.random(shape, dtype=draw) < NEGATIVE_SHARE)
        return values.astype(scalar.dtype, copy=False)
    if index_top is not None and index_top > 1:  # timing_inputs: spread like real indices
        return rng.integers(0, min(index_top, np.iinfo(scalar.dtype).max), shape).astype(scalar.dtype)
    return rng.integers(1, 10, shape).astype(scalar.dtype)


# ----------------------------------------------------------------------- checking, measuring


def relative_error(got, want) -> float:
    """The largest difference from the reference, relative to max(1, its largest magnitude),
    over every output array (inf for a shape or NaN mismatch).  An array where a difference
    is NaN (inf against inf) counts for nothing.  Computed in float64 in blocks, so a 512^3
    result is compared in about a second, not in the 17 s whole-array copies took."""
    gots, wants = _leaves(got), _leaves(want)
    if len(gots) != len(wants):
        return math.inf
    worst = 0.0
    for g, w in zip(gots, wants):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape:
            return math.inf
        leaf = _leaf_error(g.reshape(-1), w.reshape(-1))
        if leaf is None:
            return math.inf
        worst = max(worst, leaf)
    return worst


ERROR_BLOCK = 1 << 22  # elements relative_error compares at a time


def _leaf_error(g: np.ndarray, w: np.ndarray) -> float | None:
    """relative_error of one flat array: None where the NaNs differ; 0.0 where none of the
    reference is a number or a difference is NaN."""
    if g.dtype == w.dtype and np.array_equal(g, w, equal_nan=g.dtype.kind in "fc"):
        # one pass, no float64 copies: two kernels of one program at the real sizes mostly
        # agree bit for bit, and the explorer compares them while it holds the device
        return 0.0
    diff, magnitude, numbers = 0.0, 0.0, False
    for start in range(0, w.size, ERROR_BLOCK):
        gb = g[start:start + ERROR_BLOCK].astype(np.float64)
        wb = w[start:start + ERROR_BLOCK].astype(np.float64)
        wnan = np.isnan(wb)
        if not np.array_equal(np.isnan(gb), wnan):
            return None
        if wnan.any():
            gb, wb = gb[~wnan], wb[~wnan]
        if not wb.size:
            continue
        numbers = True
        block = float(np.abs(gb - wb).max())
        if math.isnan(block):
            return 0.0 if _finish_nans(g, w, start + ERROR_BLOCK) else None
        diff, magnitude = max(diff, block), max(magnitude, float(np.abs(wb).max()))
    return diff / max(1.0, magnitude) if numbers else 0.0


def _finish_nans(g: np.ndarray, w: np.ndarray, start: int) -> bool:
    """Whether the NaNs of g and w agree from `start` on (the rest of an array whose
    difference is NaN: it counts for nothing, but a NaN mismatch is still inf)."""
    return all(np.array_equal(np.isnan(g[i:i + ERROR_BLOCK]), np.isnan(w[i:i + ERROR_BLOCK]))
               for i in range(start, w.size, ERROR_BLOCK))


def _leaves(value) -> list:
    if isinstance(value, tuple):
        return [x for v in value for x in _leaves(v)]
    return [value]


def bytes_moved(inputs, output) -> int:
    """Bytes of every input and output array (the traffic a perfect kernel needs)."""
    return sum(np.asarray(x).nbytes for x in _leaves(tuple(inputs)) + _leaves(output))


def known_flops(program: Expr, sizes: dict) -> int | None:
    """Floating-point operations of a matrix-multiplication-shaped program: two or more maps
    around one dot product `reduce (+) z (map (fun(p) => fst p * snd p) (zip a b))` count 2*K
    per result element (mm: 2*M*N*K).  None for other programs (dot and gemv are measured
    in GB/s: memory bound)."""
    typed = program if program.t is not None else infer(program)
    body = typed
    while isinstance(body, (NatLambda, Lambda)):
        body = body.body
    found = _dot_flops(body, sizes, 0)
    return found[0] if found is not None and found[1] >= 2 else None  # mm-shaped: 2 maps or more


def _dot_flops(e: Expr, sizes: dict, maps: int) -> tuple[int, int] | None:
    """(flops, maps around the dot product) of maps around one dot product, else None."""
    head, args = spine(e)
    if not isinstance(head, Prim):
        return None
    if head.name == "map" and len(args) == 2 and isinstance(args[0], Lambda):
        inner = _dot_flops(args[0].body, sizes, maps + 1)
        return None if inner is None else (inner[0] * int(evaluate(args[1].t.size, sizes)), inner[1])
    if head.name == "reduce" and len(args) == 3 and _is_add(args[0]) and _is_product_map(args[2]):
        return 2 * int(evaluate(args[2].t.size, sizes)), maps
    return None


def _is_add(f: Expr) -> bool:
    return isinstance(f, Prim) and f.name == "add"


def _is_product_map(e: Expr) -> bool:
    """`map (fun(p) => fst p * snd p) (zip a b)` (either order of the factors)."""
    head, args = spine(e)
    if not (isinstance(head, Prim) and head.name == "map" and len(args) == 2 and isinstance(args[0], Lambda)):
        return False
    zipped_head, zipped = spine(args[1])
    if not (isinstance(zipped_head, Prim) and zipped_head.name == "zip" and len(zipped) == 2):
        return False
    p = args[0].param.name
    mul, factors = spine(args[0].body)
    parts = sorted(_projection(x, p) or "" for x in factors)
    return isinstance(mul, Prim) and mul.name == "mul" and parts == ["fst", "snd"]


def _projection(e: Expr, param: str) -> str | None:
    head, args = spine(e)
    if (isinstance(head, Prim) and head.name in ("fst", "snd") and len(args) == 1
            and isinstance(args[0], Identifier) and args[0].name == param):
        return head.name
    return None


__all__ = ["TOLERANCE", "ProgramLoadError", "SizeSpecError", "bytes_moved", "canonical", "check_fits_in_memory",
           "data_bytes", "differs_at", "fix_sizes",
           "known_flops", "load", "parse_sizes", "random_inputs", "relative_error", "signature", "size_vars",
           "user_functions"]
