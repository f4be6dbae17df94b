"""benchmarks/kernel_anatomy.py reads PTX: instructions counted by opcode and first qualifier,
predicated ones included; directives, labels and braces are not instructions."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import kernel_anatomy  # noqa: E402

PTX = """
.version 8.5
.visible .entry k(
\t.param .u64 k_param_0
)
{
\t.reg .pred \t%p<3>;
\tld.param.u64 \t%rd1, [k_param_0];
\tsetp.gt.s32 \t%p1, %r6, 16777215;
\t@%p1 bra \t$L__BB0_35;
$L__BB0_2:
\tfma.rn.f32 \t%f3, %f1, %f2, %f3;
\tfma.rn.f32 \t%f4, %f1, %f2, %f4;
\tex2.approx.ftz.f32 \t%f5, %f4;
\t// a comment;
\tret;
}
"""


def test_instructions_are_counted_by_opcode_and_first_qualifier():
    counts = kernel_anatomy.opcode_counts(PTX)
    assert counts == {"ld.param": 1, "setp.gt": 1, "bra": 1, "fma.rn": 2, "ex2.approx": 1, "ret": 1}
    assert kernel_anatomy.summary(counts).startswith("7 instructions: fma.rn 2")
