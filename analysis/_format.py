"""How figures read in text: shares with one decimal, kappas with three, intervals after their
estimate. The CLI and the app's tables say a figure the same way."""

from __future__ import annotations


def share(value: float | None, missing: str = "n/a") -> str:
    return missing if value is None else f"{value:.1%}"


def number(value: float | None, missing: str = "n/a") -> str:
    return missing if value is None else f"{value:.3f}"


def interval(
    bounds: tuple[float, float] | None, percent: bool = False, missing: str = "n/a"
) -> str:
    """`` [low, high]`` after an estimate, as shares or as numbers; nothing without bounds."""
    if bounds is None:
        return ""
    low, high = (share(b, missing) if percent else number(b, missing) for b in bounds)
    return f" [{low}, {high}]"
