"""The functional language: sizes, types, expressions, primitives, inference, the NumPy
reference interpreter, the textual form and the Python DSL.

    import functional as fl
    N = fl.nat("N")
    dot = fl.fun([fl.array(N, fl.f32), fl.array(N, fl.f32)],
                 lambda xs, ys: fl.reduce(fl.add, 0.0,
                                          fl.map(lambda p: fl.fst(p) * fl.snd(p), fl.zip(xs, ys))))
    fl.infer(dot).type      # (N: nat) -> N.f32 -> N.f32 -> f32
    fl.interpret(dot, x, y)
    fl.parse(str(dot)) == dot
"""

from .dsl import *  # noqa: F401,F403 -- the primitives as DSL names
from .dsl import (  # noqa: F401
    apply,
    as_vector,
    cast,
    drop,
    fragment,
    fun,
    gather,
    generate,
    iterate,
    lam,
    let,
    literal,
    map_global,
    map_local,
    map_workgroup,
    nat_apply,
    nat_fun,
    pad_clamp,
    pad_const,
    pad_mirror,
    pad_wrap,
    reorder_stride,
    scatter,
    slide,
    split,
    take,
    to_expr,
    unfragment,
    user_fun,
)
from .dsl import (  # noqa: F401 -- expression constants
    abs, add, and_, as_scalar, associative, concat, cos, div, eq, exp, fma, fst, ge, gt, join, le, log, lt, map, map_seq,
    map_seq_unroll, map_vec, max, min, mma_sync, mul, ne, neg, not_, or_, pair, reduce, reduce_seq, reduce_seq_double_buffered,
    reduce_seq_double_buffered_async, reduce_seq_unroll, reduce_warp, rem,
    select, sin, snd, sqrt, sub, to_global, to_local, to_private, transpose, unzip, zip,
)
from .dsl import (  # noqa: F401 -- math built-ins, bit operations, element access, sizes as values
    PythonBoolError, acos, asin, at, atan, atan2, bit_and, bit_not, bit_or, bit_xor, cbrt, ceil, clamp, copysign,
    cosh, erf, erfc, exp2, expm1, false, floor, fmod, hypot, lit, log1p, log2, log10, nat_value, pow, round, rsqrt,
    shl, shr, sinh, tan, tanh, tf32, true, trunc,
)
from .errors import DSLError, FunctionalError, InterpretError, NatError, ParseError, TypeInferenceError  # noqa: F401
from .expr import App, Expr, Identifier, IndexFun, Lambda, Literal, NatApp, NatLambda, Prim, UserFun  # noqa: F401
from .infer import infer  # noqa: F401
from .interp import interpret  # noqa: F401
from .precision import allow_tf32  # noqa: F401
from .nat import Nat, Var, nat  # noqa: F401
from .primitives import PRIMITIVES, PrimDecl  # noqa: F401
from .syntax import parse, parse_type  # noqa: F401
from .types import (  # noqa: F401
    AddressSpace, ArrayType, FunType, NatFunType, ScalarType, TupleType, Type, VectorType, array, boolean, f32, f64,
    i32, tuple_of, u32, vec,
)
