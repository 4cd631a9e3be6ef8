"""Any Altair chart as a PNG or SVG file, rendered offline by vl-convert (no browser, no network).

vl-convert carries Vega, Vega-Lite and a JavaScript engine inside the wheel. Remote data is
refused (``allowed_base_urls=[]``): the workbench's charts carry their data inline, so a chart
that names a URL is a mistake, not something to fetch.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import altair as alt
import vl_convert as vlc

DEFAULT_PNG_SCALE = 2.0
"""PNG pixels per chart pixel: 2 gives sharp images on high-density screens and in slides."""


def chart_spec(chart: alt.TopLevelMixin) -> dict[str, Any]:
    """The chart's Vega-Lite specification, data inline, as plain JSON values."""
    spec: dict[str, Any] = json.loads(chart.to_json(validate=True))
    return spec


def chart_to_png(chart: alt.TopLevelMixin, scale: float = DEFAULT_PNG_SCALE) -> bytes:
    """The chart as PNG bytes; ``scale`` multiplies its width and height in pixels."""
    png: bytes = vlc.vegalite_to_png(chart_spec(chart), scale=scale, allowed_base_urls=[])
    return png


def chart_to_svg(chart: alt.TopLevelMixin) -> str:
    """The chart as a standalone SVG document (text)."""
    svg: str = vlc.vegalite_to_svg(chart_spec(chart), allowed_base_urls=[])
    return svg


@lru_cache(maxsize=1)
def vega_javascript() -> str:
    """Vega, Vega-Lite and vega-embed in one script, for pages that must work offline.

    The script sets ``window.vegaEmbed``; it is about 900 KB and is built once per process.
    """
    bundle: str = vlc.javascript_bundle()  # type: ignore[call-arg]  # stub says required; it is not
    return bundle
