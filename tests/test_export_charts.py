"""Charts saved as PNG and SVG offline, and the download buttons under every chart of the app."""

from __future__ import annotations

import struct
import xml.etree.ElementTree as ET
import zlib

import altair as alt
import pytest
from conftest import RICH, open_page
from streamlit.testing.v1 import AppTest

import analysis

SVG_NS = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def ablation(loaded):
    result, _ = loaded
    return analysis.ablation_chart(analysis.ablation_table(result.judgments))


def png_chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    chunks, at = [], 8
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        chunks.append((data[at + 4 : at + 8], data[at + 8 : at + 8 + length]))
        at += 12 + length
    return chunks


def svg_size(svg: str) -> tuple[float, float]:
    root = ET.fromstring(svg)
    return float(root.get("width")), float(root.get("height"))


def test_png_is_a_png_of_the_chart_at_twice_its_size(ablation):
    png = analysis.views.chart_to_png(ablation)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    chunks = png_chunks(png)
    kinds = [kind for kind, _ in chunks]
    assert kinds[0] == b"IHDR"
    assert kinds[-1] == b"IEND"
    width, height = struct.unpack(">II", chunks[0][1][:8])
    svg_width, svg_height = svg_size(analysis.views.chart_to_svg(ablation))
    assert width == pytest.approx(2 * svg_width, abs=2)
    assert height == pytest.approx(2 * svg_height, abs=2)
    assert width > 300
    pixels = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    assert len(set(pixels)) > 10, "the image is not blank"
    smaller = struct.unpack(
        ">II", png_chunks(analysis.views.chart_to_png(ablation, scale=1))[0][1][:8]
    )
    assert smaller[0] == pytest.approx(width / 2, abs=2)


def test_svg_is_an_svg_document_with_the_chart_in_it(ablation, loaded):
    result, _ = loaded
    svg = analysis.views.chart_to_svg(ablation)
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG_NS}svg"
    texts = {"".join(t.itertext()) for t in root.iter(f"{SVG_NS}text")}
    assert "Ablation: what the judge saw" in texts
    assert {"bare", "catalog_no_call", "full"} <= texts
    bars = [p for p in root.iter(f"{SVG_NS}path") if p.get("aria-roledescription") == "bar"]
    sessions = {j.session_id for j in result.judgments}
    assert len(bars) == 3 * len(sessions)


def test_every_chart_of_the_workbench_exports(loaded):
    result, findings = loaded
    session = next(s for s in result.sessions if s.session_id == RICH)
    overview = analysis.session_overview(result.sessions, result.judgments, findings)
    charts = [
        analysis.views.score_distribution_chart(overview),
        analysis.turn_scores_chart(analysis.turn_table(session, result.judgments, findings)),
        analysis.tool_usage_chart(analysis.tool_usage(result.sessions)),
        analysis.findings_chart(analysis.findings_summary(findings)),
    ]
    for chart in charts:
        assert analysis.views.chart_to_png(chart, scale=1).startswith(b"\x89PNG")
        assert ET.fromstring(analysis.views.chart_to_svg(chart)).tag == f"{SVG_NS}svg"


def test_remote_data_is_refused_not_fetched():
    chart = alt.Chart("https://example.invalid/data.csv").mark_point().encode(x="a:Q")
    with pytest.raises(ValueError, match="not allowed"):
        analysis.views.chart_to_png(chart)
    with pytest.raises(ValueError, match="not allowed"):
        analysis.views.chart_to_svg(chart)


def download_labels(at: AppTest) -> dict[str, str]:
    return {button.key: button.label for button in at.download_button}


@pytest.mark.usefixtures("fresh_app")
@pytest.mark.parametrize(
    ("page", "params", "stem"),
    [
        ("pages/overview.py", {}, "tsq-per-session"),
        ("pages/session.py", {"session": RICH}, f"tsq-per-step-{RICH}"),
        ("pages/judge.py", {}, "ablation"),
    ],
)
def test_every_chart_in_the_app_has_png_and_svg_buttons(page, params, stem):
    at = open_page(page, **params)
    assert not at.exception
    labels = download_labels(at)
    assert labels[f"download_{stem}_png"] == "PNG"
    assert labels[f"download_{stem}_svg"] == "SVG"
