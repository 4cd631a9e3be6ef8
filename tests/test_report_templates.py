"""The report's templates (``analysis/report/templates/``): every value from a transcript, or
from a caller, is escaped by autoescape, in text and in attributes; only the markup the code
built (its tables, *What we found*, a chart's JSON) and the files beside the templates (the
stylesheet, the script that draws the charts) go in as they are."""

from __future__ import annotations

import json
from html import escape
from html.parser import HTMLParser
from importlib.resources import files

import altair as alt
import polars as pl
import pytest
from click.testing import CliRunner
from markupsafe import Markup
from pydantic import ValidationError
from test_report import Page

import analysis
from analysis.cli import cli
from analysis.report import LONG_CELL, ReportSection, render_report, table_html

HOSTILE = "<script>alert(1)</script>\"onload=alert(2) x='y' & <img src=x onerror=alert(3)>"
"""Text that would add elements or attributes to the page if it were not escaped."""
TEMPLATES = files("analysis.report").joinpath("templates")


class Elements(HTMLParser):
    """Every element's name and attributes, in document order."""

    def __init__(self, document: str) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.feed(document)

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    def attributes(self) -> set[str]:
        return {name for _, attrs in self.elements for name in attrs}

    def count(self, tag: str) -> int:
        return sum(name == tag for name, _ in self.elements)


def no_injected_markup(document: str) -> None:
    """Nothing of ``HOSTILE`` became an element or an attribute; the stdlib's spelling of the
    escaped quotes is kept (the report's bytes did not change when it moved to templates)."""
    parsed = Elements(document)
    assert parsed.count("img") == 0
    assert not {"onload", "onerror", "x"} & parsed.attributes()
    assert "<script>alert" not in document
    assert "&quot;onload=alert(2) x=&#x27;y&#x27; &amp; &lt;img" in document


def test_the_templates_ship_in_the_package():
    names = {path.name for path in TEMPLATES.iterdir()}
    expected = {"report.html", "section.html", "table.html", "found.html"}
    assert expected | {"report.css", "charts.js"} <= names


def test_the_stylesheet_and_the_charts_script_are_inlined_as_their_files_are():
    chart = alt.Chart(pl.DataFrame({"n": [1, 2]})).mark_bar().encode(y="n")
    document = render_report([ReportSection(title="One chart", charts=[chart])])
    css = TEMPLATES.joinpath("report.css").read_text(encoding="utf-8")
    script = TEMPLATES.joinpath("charts.js").read_text(encoding="utf-8")
    assert f"<style>\n{css}</style>" in document
    assert f"<script>\n{script}</script>" in document
    assert document.startswith("<!DOCTYPE html>\n")
    assert document.endswith("</html>\n")
    assert "window.vegaEmbed" in document
    without = render_report([ReportSection(title="No chart", intro="words")])
    assert Elements(without).count("script") == 0, "no chart, no chart libraries"


def test_the_table_template_escapes_names_headings_and_cells():
    long = ("word " * LONG_CELL) + HOSTILE
    frame = pl.DataFrame({HOSTILE: [HOSTILE, long], "steps": [1, 2]})
    html = table_html(frame, HOSTILE)
    assert isinstance(html, Markup)
    no_injected_markup(html)
    page = Page(html)
    (table,) = page.tables
    assert table == HOSTILE
    short, folded = page.records(HOSTILE)
    assert short[HOSTILE] == HOSTILE  # the header row keeps each column's name (data-col)
    assert folded[HOSTILE].endswith(HOSTILE), "the folded cell opens on the whole text"
    assert Elements(html).count("details") == 1


def test_the_document_and_section_templates_escape_every_text():
    chart = (
        alt.Chart(pl.DataFrame({"ask": [HOSTILE], "n": [1]}))
        .mark_bar()
        .encode(x="n", y="ask")
        .properties(title=HOSTILE)
    )
    section = ReportSection(
        title=HOSTILE,
        intro=HOSTILE,
        charts=[chart],
        table=pl.DataFrame({"ask": [HOSTILE]}),
        html=HOSTILE,
    )
    document = render_report([section], title=HOSTILE, subtitle=HOSTILE)
    no_injected_markup(document)
    page = Page(document)
    assert len(page.scripts) == len(page.charts) + 2, "the chart's JSON and the two scripts"
    (spec,) = [text for attrs, text in page.scripts if attrs.get("type") == "application/json"]
    assert "</script" not in spec
    assert json.loads(spec)["title"] == HOSTILE
    assert page.records(page.sections[0]) == [{"ask": HOSTILE}]
    texts = Text(document)
    for tag in ("title", "h1", "h2"):
        assert texts.of(tag) == [HOSTILE], tag
    assert texts.of("p") == [HOSTILE, HOSTILE]  # the subtitle and the intro
    assert texts.of("section")[0].strip() == HOSTILE, "the section's html, a plain string: text"


class Text(HTMLParser):
    """Each element's text, by tag."""

    def __init__(self, document: str) -> None:
        super().__init__()
        self.texts: list[tuple[str, list[str]]] = []
        self._open: list[tuple[str, list[str]]] = []
        self.feed(document)

    def handle_starttag(self, tag, attrs):
        self._open.append((tag, []))

    def handle_endtag(self, tag):
        while self._open:
            name, parts = self._open.pop()
            self.texts.append((name, parts))
            if name == tag:
                break

    def handle_data(self, data):
        if self._open:
            self._open[-1][1].append(data)

    def of(self, tag: str) -> list[str]:
        return ["".join(parts) for name, parts in self.texts if name == tag]


def test_a_sections_html_is_markup_only_when_the_code_says_so():
    built = Markup(f'<p class="mine">{escape(HOSTILE)}</p>')
    document = render_report([ReportSection(title="Built", html=built)])
    mine = [attrs for tag, attrs in Elements(document).elements if tag == "p"]
    assert {"class": "mine"} in mine, "Markup is inserted as it is"
    no_injected_markup(document)
    assert Text(document).of("p") == [HOSTILE]
    with pytest.raises(ValidationError):
        ReportSection(title="Not text", html=3)


def test_facts_are_escaped_in_what_we_found(loaded):
    result, findings = loaded
    extra = ReportSection(title="More", facts=[(HOSTILE, HOSTILE)])
    document = analysis.build_report(result, result.judgments, findings, extra_sections=[extra])
    no_injected_markup(document)
    page = Page(document)
    assert page.facts[HOSTILE] == HOSTILE


@pytest.fixture
def hostile_tool(write_jsonl, tmp_path):
    """A session whose ask holds a script and a quoted attribute, calling a tool so named five
    times, each call judged with a split vote arguing the same text: enough steps for the tool
    to be among the worst tools of *What we found*."""
    records = []
    judgments = []
    for turn in range(5):
        records += [
            {
                "type": "user",
                "sessionId": "h",
                "uuid": f"u{turn}",
                "message": {"role": "user", "content": HOSTILE},
            },
            {
                "type": "assistant",
                "sessionId": "h",
                "uuid": f"a{turn}",
                "message": {
                    "id": f"m{turn}",
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": HOSTILE},
                        {
                            "type": "tool_use",
                            "id": f"t{turn}",
                            "name": HOSTILE,
                            "input": {"x": HOSTILE},
                        },
                    ],
                },
            },
        ]
        judgments.append(
            {
                "session_id": "h",
                "turn_index": turn,
                "step_index": 0,
                "message_id": f"m{turn}",
                "score": 0.5,
                "votes": [
                    {"verdict": "correct", "reasoning": HOSTILE},
                    {"verdict": "incorrect", "reasoning": HOSTILE},
                ],
                "n_requested": 2,
                "n_valid": 2,
                "n_discarded": 0,
                "model": "m",
                "spec_name": "tsq-rubric/1",
                "condition": "full",
                "catalog_size": 10,
                "call_rendered": True,
                "context_chars": 0,
            }
        )
    write_jsonl(records, name="transcripts/h.jsonl")
    path = tmp_path / "h.judgments.jsonl"
    path.write_text("".join(json.dumps(j) + "\n" for j in judgments))
    return tmp_path / "transcripts", path


def test_a_hostile_ask_and_tool_name_show_as_text_in_the_report(hostile_tool, tmp_path):
    transcripts, judgments = hostile_tool
    out = tmp_path / "report.html"
    run = CliRunner().invoke(
        cli, ["report", str(transcripts), "--judgments", str(judgments), "--out", str(out)]
    )
    assert run.exit_code == 0, run.output
    document = out.read_text()
    no_injected_markup(document)
    page = Page(document)
    assert all("</script" not in text for _, text in page.scripts)
    assert len(page.scripts) == len(page.charts) + 2, "only the charts' and the two scripts"
    (worst,) = page.records("worst-tools")
    assert worst["tool"] == HOSTILE
    split = page.records("ambiguous-steps-split-votes")
    assert {(r["ask"], r["tools"], r["for_incorrect"]) for r in split} == {
        (HOSTILE, HOSTILE, HOSTILE)
    }
    (session,) = page.records("sessions")
    assert session["session"].startswith("“<script>alert(1)")
    assert HOSTILE in [r["tool"] for r in page.records("tsq-by-tool")]
