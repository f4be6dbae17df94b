"""The seed's first exploration phase (dpia.explore.algorithmic): macro rules applied automatically
under heuristics, then mapped to OpenCL; checked against the interpreter on PoCL."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import functional as fl
from dpia.explore.algorithmic import (
    Heuristics,
    MacroError,
    add_mul_distance,
    algorithmic_variants,
    macro_strategy,
    map_depth,
    mapped_strategy,
)
from functional.derivation import derive

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import seed  # noqa: E402

M, N, K = (fl.nat(n, multiple_of=64) for n in ("M", "N", "K"))
MM = fl.fun([fl.array(M, fl.array(K, fl.f32)), fl.array(K, fl.array(N, fl.f32))],
            lambda a, b: fl.map(lambda r: fl.map(lambda c: seed.dot_body(r, c), fl.transpose(b)), a))


@pytest.fixture(scope="module")
def mm_variants():
    return algorithmic_variants(MM)


def test_macros_tile_block_and_split_the_matrix_product(mm_variants):
    texts = [t for t, _ in mm_variants]
    assert {"tile_2d(16, 16)", "register_blocking_2d(2, 2)", "split_reduction(8)"} <= set(texts)
    assert any(t.startswith("tile_2d(16, 16); split_reduction") for t in texts)  # sequences of two
    assert len(set(str(e) for _, e in mm_variants)) == len(mm_variants)  # distinct results only
    assert all(t.count("tile_2d(") <= 1 for t in texts)  # each macro once per sequence


def test_heuristics_prune_deep_nesting_and_distant_products(mm_variants):
    h = Heuristics()
    assert all(map_depth(e) <= h.max_map_depth and add_mul_distance(e) <= h.max_add_mul_distance
               for _, e in mm_variants)
    shallow = algorithmic_variants(MM, Heuristics(length=1, max_map_depth=5))
    assert shallow and all(map_depth(e) <= 5 for _, e in shallow)
    assert len(shallow) < len(mm_variants)
    assert map_depth(fl.infer(MM)) == 3 and add_mul_distance(fl.infer(MM)) == 1  # map, map, map of products


def test_programs_without_a_place_for_the_macros_have_no_variants():
    assert algorithmic_variants(seed.total) == []


def test_a_map_of_scalars_is_vectorised():
    scal = fl.fun([fl.f32, fl.array(N, fl.f32)], seed.scal_body)
    texts = [t for t, _ in algorithmic_variants(scal)]
    assert texts == ["vectorize(4)", "vectorize(8)"]
    import dpia

    low, _ = derive(scal, mapped_strategy("vectorize(8)", "global"))
    x = np.random.default_rng(0).standard_normal(256).astype(np.float32)
    kernel = dpia.compile(low)
    np.testing.assert_allclose(kernel(np.float32(2.0), x), 2.0 * x, rtol=1e-6)
    assert "(global const float8*)" in kernel.source  # one aligned wide read, not vload8


@pytest.mark.parametrize("macros, mapping", [("tile_2d(16, 16); split_reduction(8)", "workgroups"),
                                             ("split_reduction(8)", "global")])
def test_a_mapped_variant_computes_the_product(macros, mapping):
    import dpia

    low, derivation = derive(MM, mapped_strategy(macros, mapping))
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((64, 128), dtype=np.float32), rng.standard_normal((128, 64), dtype=np.float32)
    np.testing.assert_allclose(dpia.compile(low)(a, b), a @ b, rtol=1e-4, atol=1e-4)
    assert derivation.steps


@pytest.mark.parametrize("text", ["", "tile(16)", "tile_2d(16, 16); unknown(2)", "tile_2d(x)"])
def test_macro_text_that_is_not_a_sequence_is_refused(text):
    with pytest.raises(MacroError):
        macro_strategy(text)


def test_the_space_of_a_matrix_product_has_the_macro_family():
    from codegen_opencl.runtime import choose_device
    from dpia.explore.space import DeviceLimits, Space

    space = Space.build(seed.mm, {"M": 128, "N": 128, "K": 128}, DeviceLimits.of(choose_device()))
    assert "macro_rewrites" in [f.name for f in space.families]
    points = [p for p in space.points if p.family == "macro_rewrites"]
    assert {dict(p.params)["mapping"] for p in points} == {"global", "workgroups"}
    assert space.needs(points[0])  # every size a multiple of the sequence's numbers
