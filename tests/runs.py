"""A driver run over a space already built: the search's bookkeeping (proposals, trials,
duplicates) driven by a test without workers or a device."""

from dpia.explore.driver import _Run


def run_over(space, *args) -> _Run:
    """`_Run(program, sizes, *args)` with `space` built: as explore has it once the build ends."""
    run = _Run(space.program, space.sizes, *args)
    run.space_built(space, 0.0)
    return run
