"""Compiling a high-level program: which lowering (variant) runs for which input sizes.

    kernel = dpia.compile(program)          # program still has map/reduce: a VariantKernel
    kernel(x)                               # sizes from x's shape; per sizes, once:
                                            #   the tuning database's best variant for (program, sizes,
                                            #   device), replayed from its derivation text, else
                                            #   a preset measured on this kind of device that fits
                                            #   (dpia.explore.presets), else
                                            #   functional.schedules.default_schedule on the program
                                            #   with the sizes fixed (dpia.programs.fix_sizes)
    kernel.variant.kind, kernel.variant.derivation, kernel.variant.launch, kernel.source, kernel.time(x)

A tuned or preset variant is derived size-generic (its program's sizes are variables with
facts: one kernel the explorer checks at small sizes and probes) and compiled at the input
sizes (`dpia.programs.at_sizes`), as the default is: constant loop bounds let the printer
give one guarded iteration per work-item instead of a loop striding by the launch size
(2.3x on PoCL for a separable convolution).  A tuned variant is compiled so only where the
explorer timed it so (`Variant.at_sizes`, the candidate's params["at_sizes"]): it had run
there beside the size-generic kernel on the device and computed the same.

The database is `db` (a TuningDB, a path, or None for TuningDB()'s default location; False:
never consult one).  A database that cannot be opened, or a stored derivation that no longer
replays or compiles, gives a TuningWarning and the default variant: running never depends
on the cache.  Derivations are parsed and replayed, never evaluated or unpickled, and a
stored one runs only when it starts from the program being compiled (its canonical form at
these sizes, user functions' C bodies and signatures included: dpia.programs.differs_at),
else it is refused with a TuningWarning (ForeignVariantError).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator

import attrs

from functional.derivation import Derivation
from functional.errors import FunctionalError, InterpretError
from functional.expr import Expr
from functional.infer import infer, typing_memo
from functional.interp import _collect, bind_sizes, layout
from functional.schedules import default_schedule

from .pipeline import PIPELINE, Options
from .programs import at_sizes, canonical, differs_at, fix_sizes, signature, size_vars, user_functions

KINDS = ("tuned", "preset", "default")


class TuningWarning(UserWarning):
    """The tuning database could not be used (so the default variant runs)."""


@attrs.frozen
class Variant:
    """One lowering of a program: `kind` "tuned" (from the database), "preset" (dpia.explore.presets)
    or "default"; its
    derivation as text (Derivation.to_text); the time the database recorded for it; why
    the default was used when a tuned variant could not be (empty otherwise)."""

    kind: str = attrs.field(validator=attrs.validators.in_(KINDS))
    derivation: str
    time_s: float | None = None
    run_id: str = ""
    note: str = ""
    # runtime.Kernel's launch options the variant was measured with (a tuned one's stored
    # params["launch"]: its local shape, dpia.explore.launch); empty: the default launch
    launch: dict = attrs.field(factory=dict, converter=lambda v: dict(v or {}))
    # a size-generic derivation compiled at the input sizes (dpia.programs.at_sizes): presets,
    # and tuned variants the explorer timed so (the default is derived at the sizes)
    at_sizes: bool = False


def needs_lowering(program: Expr) -> bool:
    """A program for the variant machinery: nothing in it is lowered yet (a program that only
    rearranges its inputs too: the default lowering adds its copy loops), or it is lowered in
    part and the translation refuses it as it stands (a `reduce_seq` inside a high-level map:
    the default lowering completes it, keeping what was chosen by hand, as the explorer
    does).  A program the translation takes as written is compiled as written."""
    from functional.infer import infer
    from functional.primitives import has_low_level

    from .translate import TranslationError, translate_program

    if not has_low_level(program):
        return True
    try:
        translate_program(program if program.t is not None else infer(program))
    except TranslationError:
        return True
    return False


# ---------------------------------------------------------------------------- the database


@contextlib.contextmanager
def open_database(db) -> Iterator[object | None]:
    """The tuning database `db` names (TuningDB, path, None: the default one, False: none),
    or None with a TuningWarning when it cannot be opened.  Closed afterwards if opened here."""
    if db is False:
        yield None
        return
    from .explore.tuning import TuningDB, TuningError

    if isinstance(db, TuningDB):
        yield db
        return
    try:
        opened = TuningDB(db)
    except (TuningError, OSError) as exc:
        warnings.warn(f"tuning database not used: {exc}", TuningWarning, stacklevel=3)
        yield None
        return
    try:
        yield opened
    finally:
        opened.close()


def best_stored(db, program_key: str, sizes: dict, device_key: str):
    """The fastest successful candidate the database holds for this key, or None."""
    from .explore.tuning import TuningError

    try:
        return db.best(program_key, sizes, device_key)
    except TuningError as exc:
        warnings.warn(f"tuning database not used: {exc}", TuningWarning, stacklevel=3)
        return None


# ----------------------------------------------------------------------------- variants


class ForeignVariantError(FunctionalError):
    """A stored derivation that is not for the program being compiled: it starts from
    another program, or from one whose user functions differ (their C bodies would run)."""


def tuned_variant(candidate, program: Expr, sizes: dict, kind: str = "tuned", note: str = "") -> tuple[Expr, Variant]:
    """Replay a stored candidate's derivation for `program` at `sizes`: it must start from
    this program (dpia.programs.differs_at: canonical forms, user functions included), else
    ForeignVariantError; the NumPy meanings of user functions are the program's.  Raises
    FunctionalError when the derivation no longer parses or replays."""
    key = canonical(program)
    if candidate.program != key:
        raise ForeignVariantError(f"the stored candidate is keyed by another program ({candidate.program[:160]})")
    derivation = Derivation.from_text(candidate.derivation, user_functions(program))
    reason = differs_at(derivation.program, program, sizes)
    if reason is not None:
        raise ForeignVariantError(f"the stored derivation is not for this program: {reason}")
    low, _ = PIPELINE["derive"].fn(program, derivation, Options())
    return low, Variant(kind, candidate.derivation, candidate.time_s, candidate.run_id, note,
                        dict(candidate.params.get("launch") or {}), bool(candidate.params.get("at_sizes")))


def _at_sizes_if_typed(low: Expr, sizes: dict, variant: Variant) -> tuple[Expr, Variant]:
    """`at_sizes`, else the size-generic program (what the explorer measured) where a
    length the sizes make zero is no type (`take (32 * (N // 32768))` at N = 4096)."""
    try:
        return at_sizes(low, sizes), variant
    except FunctionalError as exc:
        note = f"compiled size-generic (at these sizes: {exc})"
        return low, attrs.evolve(variant, note=f"{variant.note}; {note}" if variant.note else note, at_sizes=False)


def default_variant(program: Expr, sizes: dict | None = None, note: str = "", target=None) -> tuple[Expr, Variant]:
    """default_schedule on the program for a device like `target` (functional.default_lowering
    Target: dpia.explore.space.lowering_target(limits); None: the default Target), with `sizes`
    fixed when given (so reductions can be split by divisors of the actual lengths)."""
    fixed = infer(fix_sizes(program, sizes) if sizes else program)
    low, derivation = PIPELINE["derive"].fn(fixed, default_schedule(fixed, target), Options())
    return low, Variant("default", derivation.to_text(), note=note)


def preset_variant(program: Expr, sizes: dict, limits, note: str = "") -> tuple[Expr, Variant] | None:
    """The first preset (dpia.explore.presets) that fits these sizes on a device with `limits`,
    derived; None when none derives on the program and fits the device."""
    from .explore.presets import preset_for

    found = preset_for(program, sizes, limits)
    if found is None:
        return None
    preset, low, derivation = found
    return low, Variant("preset", derivation.to_text(), note=f"{note}; preset {preset}" if note else f"preset {preset}",
                        launch=preset.launch(), at_sizes=True)


def choose_variant(program: Expr, sizes: dict | None = None, device_key: str | None = None,
                   db=None, limits=None) -> tuple[Expr, Variant]:
    """The lowered program to run: the database's best for (program, sizes, device_key) if
    it replays, else the first preset that fits on a device with `limits` (DeviceLimits),
    else the default.  Without sizes or device key the database is not asked; without
    sizes or limits no preset is.  The presets tried and the default share one typing memo
    (functional.infer.typing_memo): each preset's preparation rewrites the program as the
    others' does (an arbitrary program tried against six presets took 40 s without it)."""
    with typing_memo():
        return _choose_variant(program, sizes, device_key, db, limits)


def _choose_variant(program: Expr, sizes: dict | None, device_key: str | None, db, limits) -> tuple[Expr, Variant]:
    note = ""
    if sizes is not None and device_key is not None:
        with open_database(db) as opened:
            stored = best_stored(opened, canonical(program), sizes, device_key) if opened is not None else None
        if stored is not None:
            baseline = bool(stored.params.get("baseline"))  # the exploration found nothing faster
            try:
                return tuned_variant(stored, program, sizes,
                                     note="the default lowering, fastest in the exploration" if baseline else "")
            except ForeignVariantError as exc:
                note = f"the stored variant is refused: {exc}"
                warnings.warn(f"{note}; using the default", TuningWarning, stacklevel=2)
            except FunctionalError as exc:
                note = f"the stored variant does not replay: {exc}"
                warnings.warn(f"{note}; using the default", TuningWarning, stacklevel=2)
        else:
            note = f"no tuned variant stored for these sizes and the device {device_key}"
    if sizes is not None and limits is not None:
        preset = preset_variant(program, sizes, limits, note)
        if preset is not None:
            return preset
    from .explore.space import lowering_target

    return default_variant(program, sizes, note, lowering_target(limits))


# ------------------------------------------------------------------------------- the kernel


class VariantKernel:
    """A high-level program compiled per input sizes (see the module's docstring).  Call it
    like `interpret`; `.variant`, `.source` and `.kernel` describe the last variant used."""

    def __init__(self, program: Expr, device=None, db=None, name: str = "program", pipeline=None,
                 tuned_for: str | None = None, **launch):
        from codegen_opencl.runtime import choose_device, device_key

        from .pipeline import PIPELINE

        self.program = program if program.t is not None else infer(program)
        self.device = choose_device(device)
        self.device_key = device_key(self.device)
        # whose tuned variants run here: this device's, or another's (`tuned_for`, a device key)
        self.tuned_for = tuned_for if tuned_for is not None else self.device_key
        self.name = name
        self._db = db
        self._launch = launch
        self._pipeline = pipeline or PIPELINE  # each variant is compiled by its stages translate .. build
        self._params = signature(self.program)[0]
        self._by_sizes: dict[tuple, tuple] = {}  # sorted sizes -> (runtime Kernel, Variant)
        self._last: tuple | None = None

    # -- what ran last -------------------------------------------------------------------

    @property
    def variant(self) -> Variant | None:
        """The variant of the last call (None before the first)."""
        return self._last[1] if self._last else None

    @property
    def kernel(self):
        """The runtime Kernel of the last call (None before the first)."""
        return self._last[0] if self._last else None

    @property
    def source(self) -> str | None:
        """The OpenCL source of the last variant compiled (None before the first call)."""
        return self._last[0].source if self._last else None

    # -- running -------------------------------------------------------------------------

    def __call__(self, *arrays):
        return self._select(arrays)(*arrays)

    def time(self, *arrays, repeat: int = 10, warmup: int = 2) -> float:
        """Median seconds of the variant for these inputs' sizes (see runtime.Kernel.time)."""
        return self._select(arrays).time(*arrays, repeat=repeat, warmup=warmup)

    def bind(self, *arrays):
        """The variant for these inputs' sizes with the inputs uploaded once, to be timed
        repeatedly (see runtime.Kernel.bind)."""
        return self._select(arrays).bind(*arrays)

    def sizes_of(self, arrays) -> dict[str, int]:
        """The program's sizes, read from the inputs' shapes as the interpreter reads them."""
        if len(arrays) != len(self._params):
            names = ", ".join(n for n, _ in self._params)
            raise InterpretError(f"the program takes {len(self._params)} input(s) ({names}), given {len(arrays)}")
        pairs: list = []
        for (name, t), value in zip(self._params, arrays):
            _collect(name, layout(t), value, pairs)
        return bind_sizes(pairs, size_vars(self.program))

    def for_sizes(self, sizes: dict):
        """The runtime Kernel for these sizes (chosen and compiled on first request)."""
        key = tuple(sorted(sizes.items()))
        if key not in self._by_sizes:
            self._by_sizes[key] = self._compile(dict(sizes))
        self._last = self._by_sizes[key]
        return self._last[0]

    def _select(self, arrays):
        return self.for_sizes(self.sizes_of(arrays))

    def _compile(self, sizes: dict) -> tuple:
        from .explore.space import DeviceLimits, lowering_target

        limits = DeviceLimits.of(self.device)
        low, variant = choose_variant(self.program, sizes, self.tuned_for, self._db, limits)
        if variant.kind == "default":
            return self._build(low), variant
        try:
            if variant.at_sizes:
                low, variant = _at_sizes_if_typed(low, sizes, variant)
            return self._build(low, variant.launch), variant
        except FunctionalError as exc:  # a stored or preset variant this version cannot translate or build
            note = f"the {'stored' if variant.kind == 'tuned' else 'preset'} variant does not compile: {exc}"
            warnings.warn(f"{note}; using the default", TuningWarning, stacklevel=3)
            low, variant = default_variant(self.program, sizes, note, lowering_target(limits))
            return self._build(low), variant

    def _build(self, low: Expr, launch: dict | None = None):
        """The variant's kernel, launched as it was measured (`launch`) unless the caller of
        dpia.compile gave launch options of its own (they replace the variant's)."""
        from codegen_opencl.runtime import session_for

        from .pipeline import Options

        options = Options(name=self.name, device=self.device, launch=self._launch or launch or {})
        return self._pipeline.compile(low, options, session=session_for(self.device))

    def __repr__(self) -> str:
        tuned = "" if self.tuned_for == self.device_key else f", tuned for {self.tuned_for}"
        return f"<VariantKernel {self.name} on {self.device_key}{tuned}: {len(self._by_sizes)} size(s) compiled>"


__all__ = ["KINDS", "ForeignVariantError", "TuningWarning", "Variant", "VariantKernel", "at_sizes", "choose_variant",
           "default_variant", "needs_lowering", "open_database", "preset_variant", "tuned_variant"]
