"""Pictures of an exploration, from the candidates the tuning database holds:

    <prefix>_space.png     the exploration space: how many candidates reached each throughput
                           (failures as dpia.search.FAILED counts them, and slow ones, in the title)
    <prefix>_progress.png  the best throughput found so far against seconds since the start

    space, progress = write_plots(db.candidates(run_id=run), "out/sgemm", unit="GFLOP/s", work=2 * n**3 / 1e9)

Throughput is `work / time_s`, so `work` is the amount per run in the unit's numerator (GB for
GB/s, GFLOP for GFLOP/s).  matplotlib is optional (`pip install "dpia[plot]"`) and imported only
here; figures are drawn on the Agg canvas directly, leaving pyplot's global state alone.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from functional.errors import FunctionalError

from .tuning import Candidate

FIGURE_SIZE = (7.0, 4.5)
DPI = 120
MAX_BINS = 40


class PlotError(FunctionalError):
    """Plots that cannot be drawn: matplotlib missing, a bad unit or work amount."""


def write_plots(candidates: Sequence[Candidate], prefix: str | Path, unit: str, work: float) -> tuple[Path, Path]:
    """Write `<prefix>_space.png` and `<prefix>_progress.png`; return their paths."""
    _check_arguments(unit, work)
    figure_type, canvas_type = _matplotlib()
    prefix = Path(prefix)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    space = prefix.with_name(prefix.name + "_space.png")
    progress = prefix.with_name(prefix.name + "_progress.png")
    _save(_space_figure(figure_type, candidates, unit, work), canvas_type, space)
    _save(_progress_figure(figure_type, candidates, unit, work), canvas_type, progress)
    return space, progress


def check_available() -> None:
    """Raise PlotError now when plots could not be drawn (matplotlib missing), so a command
    asked for plots can refuse before its work rather than after it."""
    _matplotlib()


def _check_arguments(unit: str, work: float) -> None:
    if not isinstance(unit, str) or not unit.strip():
        raise PlotError(f"the unit names the throughput, like 'GB/s' or 'GFLOP/s'; got {unit!r}")
    if not isinstance(work, (int, float)) or not math.isfinite(work) or work <= 0:
        raise PlotError(f"work is the positive amount per run in {unit.split('/')[0]} (throughput = work / time_s); "
                        f"got {work!r}")


def _matplotlib():
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as e:
        raise PlotError(f'plots need matplotlib, which is not installed: pip install "dpia[plot]" ({e})') from e
    return Figure, FigureCanvasAgg


def _save(figure, canvas_type, path: Path) -> None:
    canvas_type(figure)  # attaches the Agg canvas: PNG output without any GUI backend
    figure.tight_layout()
    try:
        figure.savefig(path, dpi=DPI, format="png")
    except OSError as e:
        raise PlotError(f"cannot write the plot: {e}", where=str(path)) from e


def throughput(c: Candidate, work: float) -> float:
    return work / c.time_s


def _succeeded(candidates: Sequence[Candidate]) -> list[Candidate]:
    return [c for c in candidates if c.status == "ok" and c.time_s]


def _not_ok_counts(candidates: Sequence[Candidate]) -> str:
    """`failed N (...)` by the one definition of a failure (dpia.search.FAILED, as the
    exploration's report and the CLI count), then the slow ones, which are not failures."""
    from .search import FAILED

    counts = Counter(c.status for c in candidates if c.status != "ok")
    failed = sum(n for status, n in counts.items() if status in FAILED)
    kinds = ", ".join(f"{status} {n}" for status, n in sorted(counts.items()) if status in FAILED)
    parts = [f"failed {failed}" + (f" ({kinds})" if failed else "")]
    parts += [f"{status} {n}" for status, n in sorted(counts.items()) if status not in FAILED]
    return ", ".join(parts)


def _say_nothing_succeeded(axes) -> None:
    axes.text(0.5, 0.5, "no successful candidate", ha="center", va="center", transform=axes.transAxes)


def _space_figure(figure_type, candidates: Sequence[Candidate], unit: str, work: float):
    figure = figure_type(figsize=FIGURE_SIZE)
    axes = figure.add_subplot()
    ok = [throughput(c, work) for c in _succeeded(candidates)]
    axes.set_title(f"Exploration space: {len(candidates)} candidates, {len(ok)} ok\n"
                   f"{_not_ok_counts(candidates)}", fontsize=10)
    axes.set_xlabel(f"throughput ({unit})")
    axes.set_ylabel("number of candidates")
    if not ok:
        _say_nothing_succeeded(axes)
        return figure
    axes.hist(ok, bins=min(MAX_BINS, max(1, len(ok))), color="tab:blue", label=f"ok ({len(ok)})")
    axes.axvline(max(ok), color="tab:red", linestyle="--", label=f"best {max(ok):.3g} {unit}")
    axes.legend()
    return figure


def _progress_figure(figure_type, candidates: Sequence[Candidate], unit: str, work: float):
    figure = figure_type(figsize=FIGURE_SIZE)
    axes = figure.add_subplot()
    axes.set_title(f"Best so far: {len(candidates)} candidates measured", fontsize=10)
    axes.set_xlabel("seconds since the start of the exploration")
    axes.set_ylabel(f"throughput ({unit})")
    ok = sorted(_succeeded(candidates), key=lambda c: c.created)
    if not ok:
        _say_nothing_succeeded(axes)
        return figure
    start = min(c.created for c in candidates)
    seconds = [c.created - start for c in ok]
    speeds = [throughput(c, work) for c in ok]
    axes.scatter(seconds, speeds, s=10, color="tab:gray", alpha=0.5, label="ok candidate")
    axes.step(seconds, _running_max(speeds), where="post", color="tab:red", label="best so far")
    axes.legend()
    return figure


def _running_max(values: Sequence[float]) -> list[float]:
    best, result = -math.inf, []
    for v in values:
        best = max(best, v)
        result.append(best)
    return result
