"""The exploration's errors."""

from __future__ import annotations

from functional.errors import FunctionalError


class ExploreError(FunctionalError):
    """An exploration that cannot run: bad arguments, no worker process can open the device."""


class BudgetError(ExploreError):
    """A time or candidate budget that is not positive."""


class InputsTooLargeError(ExploreError):
    """Sizes whose inputs and output cannot fit the device's or the host's memory."""


