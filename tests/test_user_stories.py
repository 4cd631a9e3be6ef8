"""Each kind of user's walk, in a real headless Chromium on real sessions from the corpus,
judged (by a Claude model, which the workbench must call out), with a screenshot of each stop
kept under ``test-artifacts/``: what a person would check, checked."""

from __future__ import annotations

import shutil
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest
from conftest import CORPUS, browser_sessions, needs_chromium, page_has_run
from streamlit_server import streamlit_server
from test_report import _rotation_judgments

import analysis

pytestmark = [pytest.mark.browser, needs_chromium]


@pytest.fixture(scope="module")
def judged_folder(tmp_path_factory) -> Path:
    """Real Claude Code sessions (a resumed one, subagents) with every step judged by a Claude
    model: split votes, unscored steps and a self-preference warning among them."""
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is not beside this checkout")
    folder = tmp_path_factory.mktemp("stories") / "sessions"
    shutil.copytree(CORPUS / "claude-code" / "spotter", folder)
    judgments = _rotation_judgments(analysis.load([folder]).sessions)
    (folder / "claude.judgments.jsonl").write_text(
        "".join(j.model_dump_json() + "\n" for j in judgments)
    )
    return folder


@pytest.fixture(scope="module")
def server():
    with streamlit_server() as running:
        yield running.url


def _open(page, url: str, heading: str) -> str:
    page.goto(url, wait_until="networkidle")
    page.get_by_role("heading", name=heading).first.wait_for(timeout=60_000)
    idle = (
        "!document.querySelector('[data-testid=\"stSkeleton\"]')"
        " && !document.querySelector('[data-testid=\"stStatusWidget\"]')"
    )
    page.wait_for_function(idle, timeout=60_000)
    page_has_run(page)
    body = page.inner_text("body")
    assert "Traceback" not in body
    return body


def _source(folder: Path) -> str:
    return f"source=folder&folder={urllib.parse.quote(str(folder))}"


def test_the_engineer_sees_why_a_step_scored_as_it_did(
    server, judged_folder, screenshots, chromium
):
    """On the Turn page of a judged step, "why this score" carries the session's warning
    about its judge (a Claude model judging Claude Code), beside the votes in words."""
    session = next(s for s in analysis.load([judged_folder]).sessions if len(s.turns) > 1)
    with browser_sessions(chromium) as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1600})
        url = f"{server}/turn?{_source(judged_folder)}&session={session.session_id}&turn=0&step=0"
        body = _open(page, url, "Turn")
        page.screenshot(path=str(screenshots / "turn.png"), full_page=True)
        browser.close()
    why = body.split("Why this score", 1)[1]
    assert "judges said" in why
    assert "SELF_PREFERENCE" in why.split("What the judge saw", 1)[0]


def test_the_presenter_reads_a_report_headed_in_words(
    server, judged_folder, screenshots, tmp_path, chromium
):
    """The report of the same sessions opens on its headline figures with their intervals,
    every heading in words and every chart drawn."""
    out = tmp_path / "report.html"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "analysis",
            "report",
            str(judged_folder),
            "--out",
            str(out),
            "--index",
            str(tmp_path / "index.duckdb"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    with browser_sessions(chromium) as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(out.as_uri())
        page.wait_for_function(
            "[...document.querySelectorAll('div.chart')].every(c => c.dataset.rendered)",
            timeout=60_000,
        )
        page.screenshot(path=str(screenshots / "first-page.png"))
        page.screenshot(path=str(screenshots / "report.png"), full_page=True)
        figures = page.locator("dl.glance").inner_text()
        headings = page.locator("table.data th").all_inner_texts()
        browser.close()
    assert "Mean TSQ [95% interval]" in figures
    assert "Steps judged" in figures
    assert headings
    assert not [h for h in headings if "_" in h]


def test_the_researcher_compares_tools_with_their_intervals(
    server, judged_folder, screenshots, chromium
):
    """The Trends page by tool: each tool's TSQ with its interval, headed in words."""
    with browser_sessions(chromium) as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1400})
        _open(page, f"{server}/trends?{_source(judged_folder)}", "Trends")
        page.get_by_text("tool", exact=True).first.click()
        page_has_run(page)
        table = page.get_by_test_id("stDataFrame").first
        table.locator("[role=columnheader]").first.wait_for(state="attached", timeout=30_000)
        headers = table.locator("[role=columnheader]").all_inner_texts()
        cells = table.locator("[role=gridcell]").all_inner_texts()
        page.screenshot(path=str(screenshots / "trends-by-tool.png"), full_page=True)
        browser.close()
    assert headers[:8] == [
        "tool",
        "steps",
        "scored steps",
        "scored sessions",
        "TSQ",
        "TSQ low (95%)",
        "TSQ high (95%)",
        "interval",  # beside the bounds: why a tool of few sessions has none
    ]
    assert "Bash" in cells
    assert "too few sessions for an interval" in cells


@pytest.mark.parametrize("where", ["empty", "unreadable"])
def test_a_bad_folder_is_one_sentence_naming_it(server, screenshots, tmp_path, where, chromium):
    """A folder of no transcripts, or one the app cannot list: one sentence naming the
    path, never a traceback, and the folder still in its box."""
    folder = tmp_path / "nothing-here" if where == "empty" else Path("/proc/1/map_files")
    if where == "empty":
        folder.mkdir()
        (folder / "notes.txt").write_text("not a transcript\n")
    with browser_sessions(chromium) as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(f"{server}/?{_source(folder)}", wait_until="networkidle")
        page.get_by_text(str(folder)).first.wait_for(timeout=60_000)
        page_has_run(page)
        body = page.inner_text("body")
        typed = page.get_by_label("Folder", exact=True).input_value()
        page.screenshot(path=str(screenshots / f"{where}.png"), full_page=True)
        browser.close()
    assert "Traceback" not in body
    assert "Ask Google" not in body
    assert typed == str(folder)
    assert str(folder) in body
