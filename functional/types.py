"""Types of the functional language.

    data ::= scalar | vec[scalar, w] | (data, ..., data) | n.data | ?t
    type ::= data | type -> type | (n: nat) -> type

Arrays carry symbolic lengths (`M.N.f32` is an M-array of N-arrays); functions may depend
on nats, which is how a program is polymorphic in its sizes.  `?t` are data-type unknowns
of inference, optionally restricted to a class of scalars (numeric, float, integer).
"""

from __future__ import annotations

import enum

import attrs
import numpy as np

from .nat import Nat, NatLike, Var, as_nat, substitute


class AddressSpace(enum.Enum):
    """Where a low-level program stores a value (`to_global`, `to_local`, `to_private`)."""

    GLOBAL = "global"
    LOCAL = "local"
    PRIVATE = "private"


class Type:
    """Base of all types (frozen attrs classes, compared structurally)."""


class DataType(Type):
    pass


@attrs.frozen
class ScalarType(DataType):
    name: str

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(_DTYPES[self.name])

    @property
    def is_float(self) -> bool:
        return self.name in ("f32", "f64")

    @property
    def is_int(self) -> bool:
        return self.name in ("i32", "u32")

    def __str__(self) -> str:
        return self.name


_DTYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "u32": np.uint32, "bool": np.bool_}

f32, f64, i32, u32, boolean = (ScalarType(n) for n in ("f32", "f64", "i32", "u32", "bool"))
SCALARS = {t.name: t for t in (f32, f64, i32, u32, boolean)}


@attrs.frozen
class VectorType(DataType):
    elem: ScalarType
    width: Nat = attrs.field(converter=as_nat)  # a constant once inferred

    def __str__(self) -> str:
        return f"vec[{self.elem}, {self.width}]"


@attrs.frozen
class TupleType(DataType):
    elems: tuple[DataType, ...]

    def __str__(self) -> str:
        return "(" + ", ".join(str(e) for e in self.elems) + ")"


@attrs.frozen
class ArrayType(DataType):
    size: Nat = attrs.field(converter=as_nat)
    elem: DataType = attrs.field()

    def __str__(self) -> str:
        s = str(self.size)
        if not _is_simple(self.size):
            s = f"({s})"
        return f"{s}.{self.elem}"


def _is_simple(n: Nat) -> bool:
    text = str(n)
    return text.isidentifier() or text.isdigit() or (text.startswith("?") and text[1:].isdigit())


class TypeClass(enum.Enum):
    """Restriction on a data-type unknown (Haskell-like: a literal `2` is any numeric type)."""

    ANY = "any"
    NUMERIC = "numeric"  # scalars other than bool, and vectors of them
    FLOAT = "float"  # f32, f64 and vectors of them
    INT = "int"  # i32, u32
    SCALAR = "scalar"  # any scalar, bool included
    NUMERIC_SCALAR = "num"  # scalars other than bool (comparisons)


@attrs.frozen
class TypeVar(DataType):
    id: int
    cls: TypeClass = TypeClass.ANY

    def __str__(self) -> str:
        return f"?t{self.id}" if self.cls is TypeClass.ANY else f"?{self.cls.value}{self.id}"


@attrs.frozen
class FunType(Type):
    param: Type
    result: Type

    def __str__(self) -> str:
        p = str(self.param)
        if isinstance(self.param, (FunType, NatFunType)):
            p = f"({p})"
        return f"{p} -> {self.result}"


@attrs.frozen
class NatFunType(Type):
    var: Var
    body: Type

    def __str__(self) -> str:
        from .nat import facts_text

        return f"({self.var.name}: nat{facts_text(self.var)}) -> {self.body}"


# ------------------------------------------------------------------------------ helpers


def array(size: NatLike, elem: DataType, *more: DataType) -> ArrayType:
    """`array(N, f32)`; nested: `array(M, array(N, f32))`."""
    if more:
        raise TypeError("array(size, elem): build nested arrays as array(M, array(N, f32))")
    return ArrayType(as_nat(size), elem)


def vec(elem: ScalarType, width: int) -> VectorType:
    return VectorType(elem, width)


def tuple_of(*elems: DataType) -> TupleType:
    return TupleType(tuple(elems))


def map_nats(t: Type, f) -> Type:
    """Apply `f: Nat -> Nat` to every size inside a type."""
    if isinstance(t, ArrayType):
        return ArrayType(f(t.size), map_nats(t.elem, f))
    if isinstance(t, TupleType):
        return TupleType(tuple(map_nats(e, f) for e in t.elems))
    if isinstance(t, VectorType):
        return VectorType(t.elem, f(t.width))
    if isinstance(t, FunType):
        return FunType(map_nats(t.param, f), map_nats(t.result, f))
    if isinstance(t, NatFunType):
        return NatFunType(t.var, map_nats(t.body, f))
    return t


def subst_nat_in_type(t: Type, mapping) -> Type:
    return map_nats(t, lambda n: substitute(n, mapping))


def nat_vars(t: Type) -> frozenset:
    """Free size variables of a type."""
    out: set = set()

    def visit(n: Nat) -> Nat:
        out.update(n.vars)
        return n

    if isinstance(t, NatFunType):
        return nat_vars(t.body) - {t.var}
    map_nats(t, visit)
    return frozenset(out)


def holds_array(t) -> bool:
    """Whether a value of type `t` is or holds an array (a tuple with an array component)."""
    return isinstance(t, ArrayType) or (isinstance(t, TupleType) and any(holds_array(x) for x in t.elems))


def scalar_of(t: DataType) -> ScalarType | None:
    if isinstance(t, ScalarType):
        return t
    if isinstance(t, VectorType):
        return t.elem
    return None


def in_class(t: DataType, cls: TypeClass) -> bool:
    if cls is TypeClass.ANY:
        return True
    if isinstance(t, TypeVar):
        return True  # checked when it is solved
    s = scalar_of(t)
    if s is None:
        return False
    if cls is TypeClass.SCALAR:
        return isinstance(t, ScalarType)
    if cls is TypeClass.NUMERIC_SCALAR:
        return isinstance(t, ScalarType) and s.name != "bool"
    if cls is TypeClass.NUMERIC:
        return s.name != "bool"
    if cls is TypeClass.FLOAT:
        return s.is_float
    return s.is_int and isinstance(t, ScalarType)


def shape_of(t: DataType, env) -> tuple[int, ...]:
    """NumPy shape of a value of data type `t` (vectors add a trailing axis)."""
    from .nat import evaluate

    if isinstance(t, ArrayType):
        return (int(evaluate(t.size, env)),) + shape_of(t.elem, env)
    if isinstance(t, VectorType):
        return (int(evaluate(t.width, env)),)
    return ()
