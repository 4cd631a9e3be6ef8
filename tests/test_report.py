"""The HTML report: numbers against independent counts, escaping, the CLI, a real browser."""

from __future__ import annotations

import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner
from conftest import BAD, RICH, SAMPLE_FOLDERS, launch_chromium, needs_chromium

import analysis
from analysis.cli import cli

SAMPLES = Path(analysis.sample_data_dir())
RAW_HTML = "<script>alert(1)</script></script><img src=x onerror=alert(2)> & done"
"""Text that would break out of the report's HTML (and its inline script) if not escaped."""


class Page(HTMLParser):
    """Tables by ``data-table`` (header and rows of cell text), script elements, tag counts,
    the sentences of *What we found* by ``data-fact``."""

    def __init__(self, document: str) -> None:
        super().__init__()
        self.tables: dict[str, dict[str, list]] = {}
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self.tags: dict[str, int] = {}
        self.sections: list[str] = []
        self.charts: list[str] = []
        self.facts: dict[str, str] = {}
        self.figures: dict[str, str] = {}
        """The headline figures of *What we found*, by ``data-figure``."""
        self.headings: dict[str, list[str]] = {}
        """Each table's column headings as a reader sees them (``header`` has the columns)."""
        self._fact: str | None = None
        self._figure: str | None = None
        self._in_value = False
        self._column: str | None = None
        self._table: str | None = None
        self._cell: list[str] | None = None
        self._row: list[str] | None = None
        self._script: dict[str, str | None] | None = None
        self._text: list[str] = []
        self.feed(document)

    def handle_starttag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1
        attributes = dict(attrs)
        if tag == "section":
            self.sections.append(attributes["id"])
        elif tag == "li" and "data-fact" in attributes:
            self._fact = attributes["data-fact"]
            self.facts[self._fact] = ""
        elif tag == "div" and attributes.get("class") == "chart":
            self.charts.append(attributes["id"])
        elif tag == "table":
            self._table = attributes["data-table"]
            self.tables[self._table] = {"header": [], "rows": []}
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []
            self._column = attributes.get("data-col") if tag == "th" else None
        elif tag == "div" and "data-figure" in attributes:
            self._figure = attributes["data-figure"]
        elif tag == "dd" and self._figure is not None:
            self._in_value = True
            self.figures[self._figure] = ""
        elif tag == "script":
            self._script, self._text = attributes, []

    def handle_endtag(self, tag):
        if tag == "li":
            self._fact = None
        if tag == "dd":
            self._in_value = False
        if tag == "div":
            self._figure = None
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            text = "".join(self._cell)
            if tag == "th" and self._table:
                self.headings.setdefault(self._table, []).append(text)
            self._row.append(self._column if tag == "th" and self._column else text)
            self._cell = None
        elif tag == "tr" and self._table and self._row is not None:
            table = self.tables[self._table]
            if table["header"]:
                table["rows"].append(self._row)
            else:
                table["header"] = self._row
            self._row = None
        elif tag == "table":
            self._table = None
        elif tag == "script" and self._script is not None:
            self.scripts.append((self._script, "".join(self._text)))
            self._script = None

    def handle_data(self, data):
        if self._in_value and self._figure is not None:
            self.figures[self._figure] += data
        if self._fact is not None:
            self.facts[self._fact] += data
        if self._cell is not None:
            self._cell.append(data)
        if self._script is not None:
            self._text.append(data)

    def records(self, name: str) -> list[dict[str, str]]:
        table = self.tables[name]
        return [dict(zip(table["header"], row, strict=True)) for row in table["rows"]]


@pytest.fixture(scope="module")
def page(loaded):
    result, findings = loaded
    return Page(analysis.build_report(result, result.judgments, findings))


def about_full(finding: analysis.Finding) -> bool:
    return finding.condition in (None, "full")


def turn_means(judgments, condition="full"):
    """Each judged turn's TSQ, counted here: the mean of its scored steps (or its own score);
    None when nothing in it was scored."""
    scores: dict[tuple[str, int], list[float]] = {}
    for j in judgments:
        if j.condition == condition:
            values = scores.setdefault((j.session_id, j.turn_index), [])
            values.extend([j.score] if j.score is not None else [])
    return {turn: sum(v) / len(v) if v else None for turn, v in scores.items()}


def is_split(judgment) -> bool:
    return judgment.score is not None and 0 < judgment.score < 1


def test_sessions_table_matches_independent_counts(loaded, page):
    result, findings = loaded
    rows = {row["session_id"]: row for row in page.records("sessions")}
    assert set(rows) == {s.session_id for s in result.sessions}
    means = turn_means(result.judgments)
    for session in result.sessions:
        row = rows[session.session_id]
        mine = {turn: mean for (sid, turn), mean in means.items() if sid == session.session_id}
        scored = [mean for mean in mine.values() if mean is not None]
        split = {
            j.turn_index
            for j in result.judgments
            if j.session_id == session.session_id and j.condition == "full" and is_split(j)
        }
        assert row["turns"] == str(len(session.turns))
        assert row["judged_turns"] == str(len(mine))
        assert row["mean_tsq"] == (f"{sum(scored) / len(scored):.2f}" if scored else "—")
        assert row["split_turns"] == str(len(split))
        about = [f for f in findings if f.session_id == session.session_id and about_full(f)]
        assert row["errors"] == str(sum(f.severity == "error" for f in about))
        assert row["warnings"] == str(sum(f.severity == "warning" for f in about))
    assert rows[BAD]["mean_tsq"] == "0.25"
    assert rows[RICH]["mean_tsq"] == "0.92"  # turns 1, 1, 1 and 2/3: the mean of turn means


def percent(text: str) -> float:
    """A share as the report writes it ("48.2%") in percent."""
    assert text.endswith("%"), text
    return float(text.removesuffix("%"))


def number(pattern: str, text: str) -> str:
    found = re.search(pattern, text)
    assert found, f"{pattern!r} not in {text!r}"
    return found.group(1)


def test_what_we_found_comes_first_with_independent_numbers(loaded, page):
    result, findings = loaded
    assert page.sections[0] == "what-we-found"
    assert list(page.facts) == ["mean_tsq", "judged", "ambiguous", "doubt", "no_catalog"]
    facts = page.facts
    means = turn_means(result.judgments)
    per_session: dict[str, list[float]] = {}
    for (sid, _), mean in means.items():
        per_session.setdefault(sid, []).extend([mean] if mean is not None else [])
    session_means = [sum(v) / len(v) for v in per_session.values() if v]
    mean = sum(session_means) / len(session_means)
    assert len(session_means) < 5, "the sample's judged sessions are too few for an interval"
    shown = re.search(
        r"Mean TSQ is (\S+) \(too few sessions for an interval\) across", facts["mean_tsq"]
    )
    assert shown, facts["mean_tsq"]
    assert shown.group(1) == f"{mean:.2f}"
    assert page.figures["mean_tsq"] == f"{mean:.2f} (too few sessions for an interval)"
    assert page.figures["sessions"] == str(len(result.sessions))
    assert number(r"across (\d+) judged sessions", facts["mean_tsq"]) == str(len(session_means))
    assert number(r"judged sessions? \(of (\d+);", facts["mean_tsq"]) == str(len(result.sessions))
    full = [j for j in result.judgments if j.condition == "full"]
    steps = [j for j in full if j.step_index is not None]
    assert number(r"scored (\d+) decisions", facts["judged"]) == str(len(steps))
    turns = {(j.session_id, j.turn_index) for j in full}
    assert number(r"in (\d+) turns", facts["judged"]) == str(len(turns))
    split = [j for j in steps if is_split(j)]
    assert split, "the sample data has a split step"
    assert number(r"^(\d+) of", facts["ambiguous"]) == str(len(split))
    assert number(r"of (\d+) decisions", facts["ambiguous"]) == str(len(steps))
    names = {r["session_id"]: r["session"] for r in page.records("sessions")}
    for sid in {j.session_id for j in split}:
        count = sum(j.session_id == sid for j in split)
        assert f"{count} in {names[sid]}" in facts["ambiguous"]
    hidden = {"CALLED_TOOL_NOT_IN_CATALOG", "USED_TOOLS_MISSING_FROM_CATALOG", "CALL_NOT_RENDERED"}
    assert not [f for f in findings if about_full(f) and f.code in hidden | {"UNSCORED"}]
    # nothing was hidden, but the scores are in doubt: no "Nothing was hidden" while they are
    alike = set()
    for sid in {sid for sid, _ in means}:
        scores = [m for (s, _), m in means.items() if s == sid]
        if len(scores) > 1 and None not in scores and len({round(m, 6) for m in scores}) == 1:
            alike.add(sid)
    by_claude = {
        j.session_id
        for j in result.judgments
        if "claude" in j.model.lower()
        and next(s for s in result.sessions if s.session_id == j.session_id).format.startswith(
            "claude-code"
        )
    }
    assert alike
    assert (
        f"{len(alike)} session{'' if len(alike) == 1 else 's'} scored every judged"
        in (facts["doubt"])
    )
    assert not by_claude  # the sample's judge is not of the agents' family
    assert "SELF_PREFERENCE" not in facts["doubt"]
    no_catalog = {f.session_id for f in findings if f.code == "NO_CATALOG"}
    assert f"{len(no_catalog)} sessions carry no tool catalog on the trace" in facts["no_catalog"]
    assert "tsq export attaches the menu" in facts["no_catalog"]


def test_what_we_found_names_what_the_judge_could_not_see(loaded):
    """Under catalog_no_call every call was left out of what the judge read: counted here."""
    result, findings = loaded
    sections = analysis.report.report_sections(
        result, result.judgments, findings, condition="catalog_no_call"
    )
    parsed = Page(sections[0].html)
    left_out = [
        f for f in findings if f.code == "CALL_NOT_RENDERED" and f.condition == "catalog_no_call"
    ]
    assert left_out
    expected = f"{len(left_out)} judged steps or turns left the agent's call out"
    assert expected in parsed.facts["unseen"]
    assert parsed.facts["unseen"].startswith("What the judge could not see: ")


def test_sessions_are_named_readably(loaded, page):
    result, _ = loaded
    rows = {row["session_id"]: row for row in page.records("sessions")}
    rich = next(s for s in result.sessions if s.session_id == RICH)
    assert rows[RICH]["session"].startswith(f"“{rich.turns[0].ask[:20]}")
    assert rows[RICH]["session"].endswith("(5eed0000…0002)")  # three ids share 5eed0000
    assert len({row["session"] for row in rows.values()}) == len(rows)
    for name in ("ambiguous-steps-split-votes", "worst-steps-per-session"):
        for row in page.records(name):
            assert row["session"] == rows[row["session_id"]]["session"]


def test_summary_counts(loaded, page):
    result, _ = loaded
    summary = {row[""]: row["value"] for row in page.records("summary")}
    assert summary["sessions"] == str(len(result.sessions))
    assert summary["turns"] == str(sum(len(s.turns) for s in result.sessions))
    full = [j for j in result.judgments if j.condition == "full"]
    assert summary["judged turns (full)"] == str(len({(j.session_id, j.turn_index) for j in full}))
    assert summary["judged steps (full)"] == str(len(full))


def test_split_vote_steps_are_listed(loaded, page):
    result, _ = loaded
    expected = {
        (j.session_id, str(j.turn_index), str(j.step_index))
        for j in result.judgments
        if j.condition == "full" and is_split(j)
    }
    rows = page.records("ambiguous-steps-split-votes")
    assert {(r["session_id"], r["turn_index"], r["step_index"]) for r in rows} == expected
    assert (rows[0]["votes_label"], rows[0]["ask"], rows[0]["tools"]) == (
        "2 of 3 judges",
        "yes do #1",
        "Edit",
    )
    assert "ambiguous-turns-split-votes" not in page.sections, "step judgments: steps only"


def test_worst_steps_are_listed_per_session(loaded, page):
    result, _ = loaded
    rows = page.records("worst-steps-per-session")
    for session in result.sessions:
        below = sorted(
            f"{j.score:.2f}"
            for j in result.judgments
            if j.session_id == session.session_id
            and j.condition == "full"
            and j.score is not None
            and j.score < 1
        )
        listed = [r["score"] for r in rows if r["session_id"] == session.session_id]
        assert listed == below[:3]
    bad = [r for r in rows if r["session_id"] == BAD]
    assert [r["turn_index"] for r in bad] == ["1", "2", "3"]  # the three wrong choices
    session = next(s for s in result.sessions if s.session_id == BAD)
    assert [r["calls"] for r in bad] == [
        ", ".join(analysis.render_call(c) for c in session.turns[t].tool_calls()) for t in (1, 2, 3)
    ]


def test_turn_level_judgments_keep_the_ambiguous_turns(loaded):
    """A file judged turn by turn (``--unit turn``, or older): split turns, no step sections."""
    result, findings = loaded
    first: dict[tuple, analysis.Judgment] = {}
    for j in result.judgments:
        first.setdefault((j.session_id, j.turn_index, j.condition), j)
    whole_turns = [
        j.model_copy(update={"step_index": None, "message_id": None}) for j in first.values()
    ]
    parsed = Page(analysis.build_report(result, whole_turns, findings))
    rows = parsed.records("ambiguous-turns-split-votes")
    expected = {
        (j.session_id, str(j.turn_index))
        for j in whole_turns
        if j.condition == "full" and is_split(j)
    }
    assert {(r["session_id"], r["turn_index"]) for r in rows} == expected
    assert rows[0]["votes_label"] == "2 of 3 judges"
    summary = {row[""]: row["value"] for row in parsed.records("summary")}
    assert "judged steps (full)" not in summary
    for absent in (
        "ambiguous-steps-split-votes",
        "worst-steps-per-session",
        "what-the-judge-saw-step-by-step",
    ):
        assert absent not in parsed.sections


def test_ablation_tables_match_the_judgments(loaded, page):
    result, _ = loaded
    rows = page.records("what-the-judge-saw-ablation")
    assert len(rows) == len({(j.session_id, j.condition) for j in result.judgments})
    for row in rows:
        means = turn_means(result.judgments, row["condition"])
        mine = [m for (sid, _), m in means.items() if sid == row["session_id"]]
        assert row["mean_tsq"] == f"{sum(mine) / len(mine):.2f}"
    steps = page.records("what-the-judge-saw-step-by-step")
    assert len(steps) == len({(j.session_id, j.turn_index, j.step_index) for j in result.judgments})
    scores = {
        (j.session_id, str(j.turn_index), str(j.step_index), j.condition): f"{j.score:.2f}"
        for j in result.judgments
    }
    for row in steps:
        where = (row["session_id"], row["turn_index"], row["step_index"])
        for condition in analysis.CONDITIONS:
            assert row[condition] == scores.get((*where, condition), "—")


def test_only_findings_that_matter_are_listed(loaded, page):
    _, findings = loaded
    serious = [f for f in findings if f.severity in ("error", "warning") and about_full(f)]
    listed = page.records("findings-list")
    assert len(listed) == len(serious)
    assert {r["severity"] for r in listed} <= {"error", "warning"}
    by_code = {  # a code's cell says it in words, the code after in brackets
        r["code"].rsplit(" (", 1)[1].rstrip(")"): int(r["findings"])
        for r in page.records("findings-that-matter")
    }
    assert by_code == {code: sum(f.code == code for f in serious) for code in by_code}
    assert sum(by_code.values()) == len(serious)


def test_charts_are_inline_with_the_libraries(page):
    specs = {a["id"]: text for a, text in page.scripts if a.get("type") == "application/json"}
    assert list(specs) == [f"{chart}-spec" for chart in page.charts]
    assert len(page.charts) >= 4  # distribution, ablation, a session's turns, findings
    for text in specs.values():
        spec = json.loads(text)
        assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/")
        assert all("url" not in d for d in spec.get("datasets", {}).values())
    code = [text for attrs, text in page.scripts if "type" not in attrs]
    assert any("window.vegaEmbed" in text for text in code)
    assert "src" not in {key for attrs, _ in page.scripts for key in attrs}
    assert page.tags.get("link", 0) == 0


def test_extra_sections_are_appended_escaped(loaded):
    result, findings = loaded
    extra = analysis.report.ReportSection(
        title="Council vs humans",
        intro="<b>not bold</b>",
        table=pl.DataFrame({"field": ["tool_policy"], "agreement": [0.48]}),
    )
    document = analysis.build_report(
        result, result.judgments, findings, extra_sections=[extra, extra]
    )
    parsed = Page(document)
    assert parsed.sections[-2:] == ["council-vs-humans", "council-vs-humans"]
    assert "&lt;b&gt;not bold&lt;/b&gt;" in document
    assert parsed.tags.get("b", 0) == 0
    assert parsed.records("council-vs-humans")[0] == {"field": "tool_policy", "agreement": "48.0%"}


@pytest.fixture
def hostile(write_jsonl, tmp_path):
    write_jsonl(
        [
            {
                "type": "user",
                "sessionId": "h",
                "uuid": "u1",
                "message": {"role": "user", "content": RAW_HTML},
            },
            {
                "type": "assistant",
                "sessionId": "h",
                "uuid": "a1",
                "message": {
                    "id": "m",
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": RAW_HTML},
                        {
                            "type": "tool_use",
                            "id": "t1",
                            "name": "Read",
                            "input": {"x": RAW_HTML},
                        },
                    ],
                },
            },
        ],
        name="transcripts/h.jsonl",
    )
    votes = [
        {"verdict": "correct", "reasoning": RAW_HTML},
        {"verdict": "incorrect", "reasoning": RAW_HTML},
    ]
    judgment = {
        "session_id": "h",
        "turn_index": 0,
        "score": 0.5,
        "votes": votes,
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
    judgments = tmp_path / "h.judgments.jsonl"
    judgments.write_text(json.dumps(judgment) + "\n")
    return tmp_path / "transcripts", judgments


def test_transcript_html_is_escaped_everywhere(hostile, tmp_path):
    transcripts, judgments = hostile
    out = tmp_path / "report.html"
    run = CliRunner().invoke(
        cli, ["report", str(transcripts), "--judgments", str(judgments), "--out", str(out)]
    )
    assert run.exit_code == 0, run.output
    document = out.read_text()
    parsed = Page(document)
    assert parsed.tags.get("img", 0) == 0
    assert "<script>alert" not in document
    assert parsed.charts
    assert len(parsed.scripts) == len(parsed.charts) + 2, "only the charts' and the two scripts"
    assert all("</script" not in text for _, text in parsed.scripts)
    split = parsed.records("ambiguous-turns-split-votes")
    assert [r["ask"] for r in split] == [RAW_HTML]
    assert split[0]["for_incorrect"] == RAW_HTML


def test_step_sections_escape_transcript_html(hostile, tmp_path):
    transcripts, judgments = hostile
    step = json.loads(judgments.read_text()) | {"step_index": 0, "message_id": "m"}
    judgments.write_text(json.dumps(step) + "\n")
    out = tmp_path / "report.html"
    run = CliRunner().invoke(
        cli, ["report", str(transcripts), "--judgments", str(judgments), "--out", str(out)]
    )
    assert run.exit_code == 0, run.output
    document = out.read_text()
    parsed = Page(document)
    assert parsed.tags.get("img", 0) == 0
    assert "<script>alert" not in document
    assert len(parsed.scripts) == len(parsed.charts) + 2, "only the charts' and the two scripts"
    (split,) = parsed.records("ambiguous-steps-split-votes")
    call = f"Read(x={json.dumps(RAW_HTML)})"
    assert (split["ask"], split["calls"], split["for_incorrect"]) == (
        RAW_HTML,
        call,
        RAW_HTML,
    )
    (worst,) = parsed.records("worst-steps-per-session")
    assert (worst["ask"], worst["calls"], worst["for_incorrect"]) == (
        RAW_HTML,
        call,
        RAW_HTML,
    )


def test_cli_report_writes_one_file_and_says_what_is_in_it(tmp_path, loaded):
    result, _ = loaded
    turns = sum(len(s.turns) for s in result.sessions)
    out = tmp_path / "report.html"
    run = CliRunner().invoke(cli, ["report", *map(str, SAMPLE_FOLDERS), "--out", str(out)])
    assert run.exit_code == 0, run.output
    expected = f"{len(result.sessions)} sessions, {turns} turns, {len(result.judgments)} judgments"
    assert run.stdout.startswith(f"Wrote {out}: {expected}")
    assert out.read_text().startswith("<!DOCTYPE html>")


def test_cli_report_judgments_file_overrides_loaded_ones(tmp_path, loaded):
    result, _ = loaded
    changed = [
        j.model_copy(update={"score": 1.0})
        for j in result.judgments
        if j.session_id == BAD and j.condition == "full"
    ]
    override = tmp_path / "override.jsonl"
    override.write_text("".join(j.model_dump_json() + "\n" for j in changed))
    out = tmp_path / "report.html"
    run = CliRunner().invoke(
        cli, ["report", *map(str, SAMPLE_FOLDERS), "--judgments", str(override), "--out", str(out)]
    )
    assert run.exit_code == 0, run.output
    rows = {r["session_id"]: r for r in Page(out.read_text()).records("sessions")}
    assert rows[BAD]["mean_tsq"] == "1.00"
    assert rows[RICH]["mean_tsq"] == "0.92"


@pytest.mark.parametrize(
    ("arguments", "code", "message"),
    [
        (["nowhere"], 2, "nowhere: no such file or folder"),
        (
            [*map(str, SAMPLE_FOLDERS), "--judgments", "missing.jsonl"],
            2,
            "missing.jsonl: cannot be read",
        ),
    ],
)
def test_cli_report_errors_are_one_line(tmp_path, arguments, code, message):
    out = tmp_path / "report.html"
    run = CliRunner().invoke(cli, ["report", *arguments, "--out", str(out)])
    assert run.exit_code == code
    assert message in run.output
    assert "Traceback" not in run.output
    assert not out.exists()


def test_cli_report_unwritable_out_is_exit_1(tmp_path):
    out = tmp_path / "no-such-folder" / "report.html"
    run = CliRunner().invoke(cli, ["report", *map(str, SAMPLE_FOLDERS), "--out", str(out)])
    assert run.exit_code == 1
    assert run.stderr.strip().splitlines()[-1:] == [
        f"{out}: cannot be written (No such file or directory)."
    ]


def test_overview_page_offers_the_report(monkeypatch):
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    st.cache_data.clear()
    app = Path(__file__).resolve().parents[1] / "app.py"
    at = AppTest.from_file(str(app), default_timeout=60).run()
    assert not at.exception
    button = at.download_button(key="download_report")
    assert button.label == "Download report (HTML)"


STUDY = SAMPLES / "council_vs_human"


def test_labels_add_the_study_tables_before_and_after(tmp_path):
    """The seed's figures, read back from the report: a direct count of the labels CSV, and
    the published 48% -> 95% for tool_policy."""
    import csv

    out = tmp_path / "report.html"
    run = CliRunner().invoke(
        cli,
        [
            *("report", *map(str, SAMPLE_FOLDERS), "--labels", str(STUDY)),
            *("--db", str(tmp_path / "d.sqlite"), "--out", str(out)),
        ],
    )
    assert run.exit_code == 0, run.output
    assert run.output.rstrip().endswith("agreement tables for 450 items")
    page = Page(out.read_text())
    with (STUDY / "labels.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    human = {r["item_id"]: r for r in rows if r["rater_kind"] == "human"}
    council = {r["item_id"]: r for r in rows if r["rater_kind"] == "council"}
    raw = {r["field"]: r for r in page.records("raw-agreement-per-field")}
    for field in ("task_completed", "efficiency_bucket", "tool_policy", "looped"):
        agreed = sum(human[i][field] == council[i][field] for i in human)
        assert raw[field]["agreed"] == str(agreed)
        assert raw[field]["n"] == str(len(human))
    assert raw["all fields"]["agreement"] == "66.6%"  # shares as percentages
    after = {r["field"]: r for r in page.records("before-and-after-reconciliation")}
    shares = (after["tool_policy"]["before"], after["tool_policy"]["after"])
    assert tuple(round(percent(x)) for x in shares) == (48, 95)
    agreement = page.facts["agreement"]
    assert page.sections[0] == "what-we-found"
    assert "on 450 items" in agreement
    for field, row in after.items():
        assert f"{field} {row['before']} → {row['after']}" in agreement  # as the table says
    assert "tool_policy 48.0% → 95.1%" in agreement
    assert "61 human-adjudicated, 280 AI-adjudicated" in out.read_text()
    assert len(page.charts) >= 9  # the sessions' charts and the study's five


@pytest.mark.browser
@needs_chromium
def test_report_renders_offline_in_a_real_browser(hostile, tmp_path):
    from playwright.sync_api import sync_playwright

    transcripts, judgments = hostile
    out = tmp_path / "report.html"
    run = CliRunner().invoke(
        cli,
        [
            "report",
            *map(str, SAMPLE_FOLDERS),
            str(transcripts),
            "--judgments",
            str(judgments),
            "--labels",
            str(STUDY),
            "--db",
            str(tmp_path / "decisions.sqlite"),
            "--out",
            str(out),
        ],
    )
    assert run.exit_code == 0, run.output
    url = out.as_uri()
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        page = browser.new_page(viewport={"width": 1300, "height": 1000})
        requests: list[str] = []
        problems: list[str] = []
        page.on("request", lambda request: requests.append(request.url))
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda error: problems.append(str(error)))
        page.on("dialog", lambda dialog: (problems.append(dialog.message), dialog.dismiss()))
        page.goto(url, wait_until="load")
        page.screenshot(path=str(Path("/tmp") / "tsq-report-first-screen.png"))
        heading = page.get_by_role("heading", name="What we found")
        assert heading.is_visible()
        box = heading.bounding_box()
        assert box is not None
        assert box["y"] >= 0
        assert box["y"] + box["height"] <= 1000
        charts = page.locator("div.chart")
        count = charts.count()
        assert count >= 4
        page.wait_for_function(
            "[...document.querySelectorAll('div.chart')]"
            ".every(el => el.getAttribute('data-rendered') === 'true')",
            timeout=30_000,
        )
        for index in range(count):
            chart = charts.nth(index)
            assert chart.locator("svg").count() >= 1
            assert chart.locator("svg .mark-rect, svg .mark-symbol, svg path").count() > 0
        assert RAW_HTML in page.inner_text("body")
        wide = page.evaluate("document.documentElement.scrollWidth")
        assert wide <= 1300, f"the report scrolls sideways: {wide}px wide"  # tables scroll inside
        page.emulate_media(media="print")  # A4 is 210 mm wide: 794 CSS px, margins inside
        page.set_viewport_size({"width": 794, "height": 1123})
        wide = page.evaluate("document.documentElement.scrollWidth")
        assert wide <= 794, f"the printed page is {wide}px wide"
        breaks = page.evaluate("getComputedStyle(document.querySelector('div.chart')).breakInside")
        assert breaks == "avoid"
        page.pdf(path=str(Path("/tmp") / "tsq-report.pdf"), format="A4")
        browser.close()
    assert problems == []
    assert [u for u in requests if u != url and not u.startswith("data:")] == []


def test_file_names_keep_no_home_folder_unless_asked(tmp_path, monkeypatch):
    """A parse issue's file lives in the user's home folder: the report writes it from ``~``
    (the rule of ``tsq send``), and ``--show-paths`` writes it in full."""
    home = tmp_path / "alice"
    folder = home / "projects" / "demo"
    folder.mkdir(parents=True)
    (folder / "broken.jsonl").write_text("{not json\n")
    source = SAMPLES / "transcripts" / "bad-choices.synthetic.jsonl"
    (folder / source.name).write_bytes(source.read_bytes())
    monkeypatch.setenv("HOME", str(home))
    out, full = tmp_path / "report.html", tmp_path / "full.html"
    run = CliRunner().invoke(cli, ["report", str(folder), "--out", str(out)])
    assert run.exit_code == 0, run.output
    document = out.read_text()
    (issue,) = Page(document).records("parse-issues")
    assert issue["file"] == "~/projects/demo/broken.jsonl"
    assert str(home) not in document
    run = CliRunner().invoke(cli, ["report", str(folder), "--show-paths", "--out", str(full)])
    assert run.exit_code == 0, run.output
    (issue,) = Page(full.read_text()).records("parse-issues")
    assert issue["file"] == str(folder / "broken.jsonl")


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("/home/alice/x.jsonl", "~/x.jsonl"),
        ("/home/alice", "~"),
        ("/home/alice2/x.jsonl", "/home/USER/x.jsonl"),  # a name that only starts alike
        ("/home/bob/.claude/a.jsonl", "/home/USER/.claude/a.jsonl"),
        ("/Users/carol/a.jsonl", "/Users/USER/a.jsonl"),
        ("C:\\Users\\dave\\a.jsonl", "C:\\Users\\USER\\a.jsonl"),
        ("/srv/data/home/alice/a.jsonl", "/srv/data/home/USER/a.jsonl"),
        ("relative/a.jsonl", "relative/a.jsonl"),
    ],
)
def test_home_folder_names_are_hidden_as_tsq_send_does(text, shown):
    from analysis.export import Sanitizer, without_home

    assert without_home(text, home="/home/alice") == shown
    if not shown.startswith("~"):  # tsq send's own rule gives the same for other users
        assert Sanitizer().text(text) == shown


def test_a_judge_of_the_agents_own_family_puts_the_scores_in_doubt(loaded):
    result, _ = loaded
    claude_code = {s.session_id for s in result.sessions if s.format.startswith("claude-code")}
    by_claude = [
        j.model_copy(update={"model": "claude-sonnet-4-5"})
        for j in result.judgments
        if j.session_id in claude_code
    ]
    page = Page(analysis.build_report(result, by_claude))
    judged = len({j.session_id for j in by_claude})
    assert (
        f"{judged} sessions were judged by a model of the agent's own family"
        in (page.facts["doubt"])
    )
    assert "unseen" not in page.facts or not page.facts["unseen"].startswith("Nothing was hidden")


def _rotation_judgments(sessions) -> list:
    """Every tool-calling step (subagents' too) judged by a Claude model with a rotation of
    pass, split, fail and no valid vote: the inputs the report's detail sections need."""
    from test_review import step_judgment

    from analysis.render import turn_steps

    outcomes = [["correct"] * 3, ["correct", "correct", "incorrect"], ["incorrect"] * 3, []]
    return [
        step_judgment(session.session_id, step, outcomes[n % 4]).model_copy(
            update={"model": "claude-judge"}
        )
        for session in sessions
        for n, step in enumerate(
            step for turn in session.turns for step in turn_steps(turn, subagents=True)
        )
    ]


def test_the_report_through_the_index_is_the_report_of_every_file(corpus, tmp_path):
    """``tsq report`` through the index, with ``--no-index``, and the app's report: the same
    document on real sessions (a resumed one, subagents) and the samples, with judgments
    among the files and from --judgments."""
    from analysis.index import Collection
    from workbench import Workspace

    folder = tmp_path / "sessions"
    shutil.copytree(corpus / "claude-code" / "spotter", folder / "spotter")
    shutil.copytree(SAMPLES / "transcripts", folder / "samples")
    judged = analysis.load([folder / "spotter"]).sessions
    judgments = _rotation_judgments(judged)
    among = folder / "spotter.judgments.jsonl"
    among.write_text("".join(j.model_dump_json() + "\n" for j in judgments[::2]))
    extra = tmp_path / "more.judgments.jsonl"
    extra.write_text("".join(j.model_dump_json() + "\n" for j in judgments[1::2]))
    index = tmp_path / "index.duckdb"
    documents = []
    for options in (["--index", str(index)], ["--no-index"]):
        out = tmp_path / f"report{len(documents)}.html"
        args = ["report", str(folder), "--judgments", str(extra), "--out", str(out), *options]
        done = CliRunner().invoke(cli, args)
        assert done.exit_code == 0, done.output
        documents.append(out.read_text())
    assert documents[0] == documents[1]
    page = Page(documents[0])
    split = page.tables["ambiguous-steps-split-votes"]["rows"]
    assert len(split) == sum(0 < (j.score or 0) < 1 for j in judgments)

    workspace = Workspace(Collection([folder], index), fresh=analysis.load_judgments(extra))
    assert workspace.report(show_paths=False) == documents[0]


def test_the_headline_interval_resamples_the_judged_sessions():
    """The alignment sample's 30 sessions judged by one spec: the mean of the sessions' TSQ
    with the interval of a bootstrap over those sessions, computed here by a loop over
    resamples from each session's turns read off the judgments file."""
    from test_intervals import loop_session_bootstrap

    folder = SAMPLES / "alignment"
    path = folder / "judgments" / "team-rules.judgments.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    turns: dict[str, dict[int, list[float]]] = {}
    for line in lines:
        turns.setdefault(line["session_id"], {}).setdefault(line["turn_index"], []).append(
            line["score"]
        )
    means = {
        session: sum(sum(v) / len(v) for v in by_turn.values()) / len(by_turn)
        for session, by_turn in turns.items()
    }
    names = sorted(means)
    low, high = loop_session_bootstrap([means[n] for n in names], names)
    mean = sum(means.values()) / len(means)
    result = analysis.load([folder / "transcripts"])
    page = Page(analysis.build_report(result, analysis.load_judgments(path)))
    assert page.figures["mean_tsq"] == f"{mean:.2f} [{low:.2f}, {high:.2f}]"
    assert f"across {len(means)} judged sessions" in page.facts["mean_tsq"]


def test_the_first_page_gives_its_figures_with_intervals_in_words(corpus, tmp_path):
    """What a stakeholder reads first, through the index with people's labels: the judge's
    agreement with them and the lowest-TSQ tools, against counts made here from the
    judgments, the labels and the sessions' own calls; every heading is words."""
    from analysis.index import Collection
    from analysis.render import turn_steps
    from analysis.study import StepLabel

    folder = tmp_path / "sessions"
    shutil.copytree(corpus / "claude-code" / "spotter", folder)
    sessions = analysis.load([folder]).sessions
    judgments = _rotation_judgments(sessions)
    (folder / "rotation.judgments.jsonl").write_text(
        "".join(j.model_dump_json() + "\n" for j in judgments)
    )
    scored = [j for j in judgments if j.score is not None]
    people = {j.item_id: ("correct" if n % 3 else "incorrect") for n, j in enumerate(scored[:40])}
    store = analysis.LabelStore(tmp_path / "labels.sqlite")
    store.save_step_labels(
        [StepLabel(item_id=item, labeller="alice", value=value) for item, value in people.items()]
    )
    collection = Collection([folder], tmp_path / "index.duckdb", label_stores=[store.path])
    page = Page(analysis.build_report(collection))

    agree = sum((j.score >= 0.5) == (people[j.item_id] == "correct") for j in scored[:40])
    labelled_sessions = {j.session_id for j in scored[:40]}
    assert len(labelled_sessions) < 5, "these sessions are too few for an interval"
    assert page.figures["agreement"] == (
        f"{agree / 40:.1%} (too few sessions for an interval) of 40 labelled steps"
    )
    assert page.figures["judged"] == f"{len(judgments):,}"

    tools: dict[str, list[float]] = {}
    tool_sessions: dict[str, set[str]] = {}
    for session in sessions:
        for turn in session.turns:
            for step in turn_steps(turn, subagents=True):
                key = (session.session_id, turn.index, step.index, step.parent_call_id)
                score = next(
                    (
                        j.score
                        for j in scored
                        if (j.session_id, j.turn_index, j.step_index, j.parent_call_id) == key
                    ),
                    None,
                )
                for tool in dict.fromkeys(call.name for call in step.message.tool_calls):
                    if score is not None:
                        tools.setdefault(tool, []).append(score)
                        tool_sessions.setdefault(tool, set()).add(session.session_id)
    means = sorted((sum(v) / len(v), tool) for tool, v in tools.items() if len(v) >= 5)[:3]
    worst = page.records("worst-tools")
    assert [row["tool"] for row in worst] == [tool for _, tool in means]
    for row, (mean, _) in zip(worst, means, strict=True):  # two decimals, either way of a tie
        assert float(row["tsq"]) == pytest.approx(mean, abs=0.005 + 1e-9)
    for row in worst:  # each tool's steps come from fewer than five sessions
        assert row["judged_sessions"] == str(len(tool_sessions[row["tool"]]))
        assert len(tool_sessions[row["tool"]]) < 5
        assert (row["tsq_low"], row["tsq_high"]) == ("—", "—")
        assert row["interval"] == "too few sessions for an interval"
    for table, headings in page.headings.items():
        assert not [h for h in headings if "_" in h], table


def test_long_cells_fold_and_numbers_read_as_people_write_them():
    from analysis.report import LONG_CELL, table_html

    long = "word " * 100
    frame = pl.DataFrame(
        {"calls": [long.strip(), "Read"], "split_share": [0.3333, None], "steps": [12345, 2]}
    )
    page = Page(table_html(frame, "t"))
    assert page.headings["t"] == ["calls", "split votes", "steps"]
    folded, short = page.records("t")
    assert folded["calls"].startswith("word word")
    assert f"… ({len(long.strip()):,} characters)" in folded["calls"]
    assert folded["calls"].endswith(long.strip()), "the whole text is a click away"
    assert len(folded["calls"].split("…")[0]) <= LONG_CELL
    assert (short["calls"], short["split_share"], short["steps"]) == ("Read", "—", "2")
    assert (folded["split_share"], folded["steps"]) == ("33.3%", "12,345")


@pytest.mark.browser
@needs_chromium
def test_a_judged_real_session_and_rollouts_give_a_report_in_words_that_fits_the_page(
    corpus, tmp_path
):
    """The report of a real Claude Code session of 149 steps and real Codex rollouts, every
    step judged (a rotation of pass, split, fail and no valid vote): its headings and findings
    in words, its tables within the page (a wide one scrolls in its own box), every chart drawn,
    offline, in Chromium, and nothing said in the console."""
    from playwright.sync_api import sync_playwright
    from test_glossary import SNAKE, ReportText, coded_without_words

    folders = [corpus / "claude-code" / "spotter", corpus / "codex" / "codemie-code"]
    sessions = analysis.load(folders).sessions
    assert max(sum(len(t.messages) for t in s.turns) for s in sessions) >= 100
    judgments = tmp_path / "rotation.judgments.jsonl"
    judgments.write_text("".join(j.model_dump_json() + "\n" for j in _rotation_judgments(sessions)))
    out = tmp_path / "report.html"
    args = ["report", *map(str, folders), "--judgments", str(judgments), "--out", str(out)]
    done = CliRunner().invoke(cli, args)
    assert done.exit_code == 0, done.output
    read = ReportText()
    read.feed(out.read_text())
    assert [h for h in read.headings if SNAKE.search(h)] == []
    assert coded_without_words(" ".join(read.text)) == []
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        page = browser.new_page(viewport={"width": 1300, "height": 1000})
        problems: list[str] = []
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda error: problems.append(str(error)))
        page.goto(out.as_uri(), wait_until="load")
        charts = page.locator("div.chart")
        assert charts.count() >= 4
        page.wait_for_function(
            "[...document.querySelectorAll('div.chart')]"
            ".every(el => el.getAttribute('data-rendered') === 'true')",
            timeout=30_000,
        )
        wide = page.evaluate("document.documentElement.scrollWidth")
        assert wide <= 1300, f"the report scrolls sideways: {wide}px wide"
        page.screenshot(path=str(Path("/tmp") / "tsq-report-judged-real.png"), full_page=True)
        browser.close()
    assert problems == []
