"""Every page and the report speak in words: no heading, table heading or choice in
snake_case, no finding code without its words, no cell reading "None"."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest
from conftest import BAD, CORPUS, RICH, SAMPLE_FOLDERS, open_page, tsq
from streamlit.testing.v1 import AppTest

import analysis
from analysis.findings import CODES

SNAKE = re.compile(r"(?<![\w./-])[a-z]+(?:_[a-z0-9]+)+(?![\w./-])")
"""A snake_case word standing alone (not part of a path, a file name or an id)."""

WALKS = [
    ("pages/overview.py", {}),
    ("pages/trends.py", {}),
    ("pages/session.py", {"session": RICH}),
    ("pages/turn.py", {"session": RICH, "turn": "3"}),
    ("pages/turn.py", {"session": BAD, "turn": "0"}),
    ("pages/catalog.py", {"session": RICH}),
    ("pages/judge.py", {"session": RICH}),
    ("pages/agreement.py", {}),
    ("pages/adjudicate.py", {}),
    ("pages/agreement.py", {"source": "alignment"}),
]


def coded_without_words(text: str) -> list[str]:
    """The finding codes in ``text`` not written as ``words (CODE)``."""
    return [
        code
        for code in CODES
        if code in text and f"{analysis.words(code)} ({code})".lower() not in text.lower()
    ]


def table_headings(at: AppTest) -> list[str]:
    """What each table's columns are headed with in the browser: their configured labels,
    else their names."""
    headings = []
    for table in at.dataframe:
        config = json.loads(table.proto.columns or "{}")
        for column in table.value.columns:
            label = config.get(str(column), {}).get("label")
            headings.append(label or str(column))
    return headings


def choices(at: AppTest) -> list[str]:
    shown: list[str] = []
    for kind in ("radio", "selectbox", "multiselect"):
        for widget in getattr(at, kind):
            shown += [str(option) for option in widget.options]
    for control in at.get("button_group"):
        shown += [option.content for option in control.proto.options]
    return shown


@pytest.mark.parametrize(("path", "params"), WALKS, ids=lambda w: str(w))
def test_every_page_speaks_in_words(path, params):
    at = open_page(path, **params)
    assert not at.exception
    headings = [e.value for kind in ("title", "header", "subheader") for e in getattr(at, kind)]
    snake = [h for h in headings + table_headings(at) + choices(at) if SNAKE.search(h)]
    assert snake == [], "headings, table headings and choices in snake_case"
    said = [
        str(e.value)
        for kind in ("markdown", "caption", "info", "warning", "error", "text", "title")
        for e in getattr(at, kind)
    ]
    assert [(s, coded_without_words(s)) for s in said if coded_without_words(s)] == []
    for table in at.dataframe:
        cells = table.value.astype(str)
        assert not (cells == "None").any().any(), "a cell reads None"


class ReportText(HTMLParser):
    """The report's headings and table headings, and its text."""

    def __init__(self) -> None:
        super().__init__()
        self.headings: list[str] = []
        self.text: list[str] = []
        self._in: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._in.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self._in:
            del self._in[len(self._in) - 1 - self._in[::-1].index(tag)]

    def handle_data(self, data: str) -> None:
        if not data.strip() or {"script", "style"} & set(self._in):
            return
        self.text.append(data)
        if {"h1", "h2", "h3", "h4", "th"} & set(self._in):
            self.headings.append(data.strip())


@pytest.mark.parametrize(
    "folders",
    [
        SAMPLE_FOLDERS,
        [CORPUS / "claude-code" / "spotter"],  # a real turn of 149 steps
        [CORPUS / "codex" / "codemie-code"],  # real Codex rollouts
    ],
    ids=["sample", "claude-code", "codex"],
)
def test_the_report_speaks_in_words(folders, tmp_path):
    out = tmp_path / "report.html"
    done = tsq("report", *map(str, folders), "--out", str(out))
    assert done.returncode == 0, done.stderr
    page = ReportText()
    page.feed(out.read_text())
    assert [h for h in page.headings if SNAKE.search(h)] == []
    text = " ".join(page.text)
    assert coded_without_words(text) == []
