"""The rule catalogue, by family.  `RULES` maps names to rules; `catalogue()` lists them."""

from . import algorithmic, blocking, indexing, lowering, macros, movement, normal_forms, stencil  # noqa: F401 -- registers the rules
from .core import RULES, L, Lit, NotApplicable, OneOf, P, Rule, RuleError, V, rule  # noqa: F401


def catalogue() -> list[dict]:
    """Every rule with its family, equation, parameters and whether it has a checker."""
    return [
        {"name": r.name, "family": r.family, "equation": r.equation, "params": list(r.params),
         "exact": r.exact, "checked": r.example is not None}
        for r in sorted(RULES.values(), key=lambda r: (r.family, r.name))
    ]
