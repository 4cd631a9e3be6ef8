"""End to end in a real headless Chromium: open a split-vote turn and see what the judge saw."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import CORPUS, RICH, browser_sessions, needs_chromium, page_has_run
from streamlit_server import streamlit_server

pytestmark = [
    pytest.mark.browser,
    needs_chromium,
]


@pytest.fixture(scope="module")
def server():
    with streamlit_server() as running:
        yield running.url


def test_split_vote_turn_in_a_real_browser(server, tmp_path, chromium):
    with browser_sessions(chromium) as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1800})
        requests: list[str] = []
        page.on("request", lambda request: requests.append(request.url))
        # The first visit to a freshly started server is a deep link: it must get the
        # workbench's own navigation (titled pages), not Streamlit's file-name pages.
        page.goto(f"{server}/turn?session={RICH}&turn=3", wait_until="networkidle")
        page.get_by_text("Judge 3: incorrect").wait_for(timeout=30_000)
        navigation = page.locator(".st-key-workbench_navigation").inner_text()
        assert not page.get_by_test_id("stSidebarNav").count(), "Streamlit's file names stay hidden"
        assert navigation.split() == [
            "Overview",
            "Trends",
            "Session",
            "Turn",
            "Catalog",
            "Judge",
            "Agreement",
            "Adjudicate",
        ]
        page.get_by_text("SPLIT_VOTE").first.wait_for(state="attached", timeout=30_000)
        page.wait_for_function(
            "!document.querySelector('[data-testid=\"stSkeleton\"]')", timeout=30_000
        )
        body = page.inner_text("body")
        assert "yes do #1" in body
        assert "Judge 1: correct" in body
        assert "Judge 2: correct" in body
        assert "0.67" in body
        assert 'Edit(file_path="tests/payments/test_webhooks.py"' in body
        shot = tmp_path / "split-vote-turn.png"
        page.screenshot(path=str(shot), full_page=True)
        browser.close()
    assert shot.stat().st_size > 10_000
    outside = [u for u in requests if not u.startswith(server) and not u.startswith("data:")]
    assert outside == []


def test_a_link_to_a_subagent_step_opens_that_step_in_a_real_browser(server, chromium):
    with browser_sessions(chromium) as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1800})
        page.goto(f"{server}/turn?session={RICH}&turn=1&step=2&call=toolu_t1")
        page.get_by_text("Step 2, in the subagent spawned by call toolu_t1").wait_for(
            timeout=30_000
        )
        page.get_by_text("Grep(").first.wait_for(state="attached", timeout=30_000)
        body = page.inner_text("body")
        assert "List the test cases in tests/payments/" in body  # the subagent's prompt
        assert "[step 1]" in body  # its run so far
        page.goto(f"{server}/session?session={RICH}")
        page.get_by_text("TSQ per step").first.wait_for(state="attached", timeout=30_000)
        page.locator(".vega-embed").first.wait_for(timeout=30_000)
        browser.close()


def test_the_chosen_session_and_turn_follow_the_user_in_a_real_browser(server, chromium):
    from urllib.parse import quote

    from playwright.sync_api import expect

    folder = CORPUS / "claude-code"
    if not folder.is_dir():
        pytest.skip("../shared/corpus is not beside this checkout")
    chosen = "d6e0bada-1959-4eec-a9d2-0bfade768d8f"  # tool_heavy.jsonl: three turns
    named = "“start phoenix in background” (d6e0bada)"  # its first ask and short id
    with browser_sessions(chromium) as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1800})

        def sidebar(title: str) -> None:
            page.locator(".st-key-workbench_navigation").get_by_text(title, exact=True).click()
            page.get_by_role("heading", name=title if title != "Overview" else "Sessions").wait_for(
                timeout=30_000
            )

        def shows(session: str, turn: str | None = None) -> None:
            picker = page.get_by_role("combobox", name="Session")
            expect(picker).to_have_value(named if session == chosen else session, timeout=30_000)
            if turn is not None:
                expect(page.get_by_role("spinbutton", name="Turn")).to_have_value(
                    turn, timeout=30_000
                )
                # turn 0 is the default: the same URL picks it again, so it stays out of it
                wanted = f"turn={turn}" if turn != "0" else "^((?!turn=).)*$"
                expect(page).to_have_url(re.compile(wanted), timeout=30_000)
            expect(page).to_have_url(re.compile(f"session={session}"), timeout=30_000)
            expect(page).to_have_url(re.compile("source=folder"), timeout=30_000)
            # the navigation is drawn again after the URL changes: a click before that
            # follows the links of the page as it was
            carried = f"session={session}" + (f".*turn={turn}" if turn not in (None, "0") else "")
            for link in page.locator(".st-key-workbench_navigation a").all():
                expect(link).to_have_attribute("href", re.compile(carried), timeout=30_000)

        page.goto(f"{server}/?source=folder&folder={quote(str(folder))}")
        page.get_by_text("7 of 7 sessions").wait_for(timeout=30_000)
        sidebar("Session")
        page.get_by_test_id("stSelectbox").click()
        page.get_by_role("option", name=named).click()
        shows(chosen)
        sidebar("Turn")
        shows(chosen, "0")
        page.get_by_role("spinbutton", name="Turn").fill("2")
        page.get_by_role("spinbutton", name="Turn").press("Enter")
        shows(chosen, "2")
        sidebar("Catalog")
        shows(chosen, "2")
        sidebar("Session")
        shows(chosen)
        page.reload()
        shows(chosen)
        sidebar("Turn")
        shows(chosen, "2")
        page.reload()
        shows(chosen, "2")
        page.goto(f"{server}/session?source=folder&folder={quote(str(folder))}&session=nope")
        page.get_by_text("No session nope in the data loaded: showing").wait_for(timeout=30_000)
        browser.close()


def test_agreement_and_a_real_turn_in_a_real_browser(server, tmp_path, chromium):
    """The Agreement page's charts, and a real Claude Code turn's judged menu, on screen."""
    from urllib.parse import quote

    folder = CORPUS / "claude-code"
    if not folder.is_dir():
        pytest.skip("../shared/corpus is not beside this checkout")
    with browser_sessions(chromium) as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 3000})
        requests: list[str] = []
        page.on("request", lambda request: requests.append(request.url))

        page.goto(f"{server}/agreement")
        page.get_by_text("Kappa per pair of raters: task_completed").wait_for(timeout=60_000)
        page.get_by_role("tab", name="4 · AI adjudicator's side").click()
        page.get_by_text("Did the AI adjudicator follow the rule?").wait_for(timeout=30_000)
        page.screenshot(path=str(tmp_path / "agreement.png"))

        session = "d6e0bada-1959-4eec-a9d2-0bfade768d8f"  # tool_heavy.jsonl
        page.goto(
            f"{server}/turn?source=folder&folder={quote(str(folder))}&session={session}&turn=2"
        )
        page.get_by_text("The menu it chose from: ").wait_for(timeout=60_000)
        page.get_by_role("button", name="Judge this session on the Judge page").wait_for(
            timeout=30_000
        )
        body = page.inner_text("body")
        assert "Not judged under the full condition." in body
        page.screenshot(path=str(tmp_path / "real-turn.png"))
        browser.close()
    assert (tmp_path / "agreement.png").stat().st_size > 10_000
    assert (tmp_path / "real-turn.png").stat().st_size > 10_000
    outside = [u for u in requests if not u.startswith(server) and not u.startswith("data:")]
    assert outside == []


def test_a_row_picked_in_a_long_table_brings_its_detail_into_view(server, screenshots, chromium):
    """The Agreement page's disagreements: a row picked at the table opens its detail below,
    and the page scrolls so that the detail shows."""
    with browser_sessions(chromium) as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(f"{server}/agreement")
        page.get_by_role("heading", name="Disagreements").wait_for(timeout=60_000)
        page_has_run(page)
        table = page.locator('[class*="st-key-dis_table"]')
        table.scroll_into_view_if_needed()
        box = table.bounding_box()
        assert box is not None
        # the table fills the window, its top at the window's: the detail opens below it
        height = int(box["height"]) + 60
        page.set_viewport_size({"width": 1400, "height": height})
        page.evaluate(f"window.scrollBy(0, {box['y']})")
        box = table.bounding_box()
        assert box is not None
        page.mouse.click(box["x"] + 15, box["y"] + 35 + 17)  # the first row's checkbox cell
        detail = page.locator(".st-key-disagreement_detail")
        detail.wait_for(timeout=30_000)
        page_has_run(page)
        page.wait_for_timeout(800)  # the smooth scroll
        shown = detail.bounding_box()
        assert shown is not None
        assert 0 <= shown["y"] < height / 2, f"the detail starts at {shown['y']:.0f}px"
        page.screenshot(path=str(screenshots / "detail-in-view.png"))
        browser.close()


EVIL = "![x](http://evil.example/{}.png)<img src=http://evil.example/{}i.png>"


def _hostile_workspace(root: Path) -> tuple[Path, Path]:
    """A transcript folder whose path, title, ask, tool call and answer carry markup that
    would fetch from evil.example if rendered, and a study whose item ids and label values do.
    Folder names cannot hold "//", but "http:/host" (one slash) is fetched all the same."""
    import json

    folder = root / "![f](http:" / "evil.example" / "folder.png)"
    folder.mkdir(parents=True)
    session = "hostile-session"
    records = [
        {"type": "summary", "summary": EVIL.format("title", "title"), "leafUuid": "a1"},
        {
            "type": "user",
            "sessionId": session,
            "uuid": "u1",
            "timestamp": "2026-02-11T20:00:00.000Z",
            "cwd": "/repo/" + EVIL.format("cwd", "cwd"),
            "message": {"role": "user", "content": EVIL.format("ask", "ask")},
        },
        {
            "type": "assistant",
            "sessionId": session,
            "uuid": "a1",
            "timestamp": "2026-02-11T20:00:01.000Z",
            "message": {
                "id": "m1",
                "role": "assistant",
                "model": "claude-opus-4-6",
                "content": [
                    {"type": "text", "text": EVIL.format("answer", "answer")},
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "Bash",
                        "input": {"command": EVIL.format("input", "input")},
                    },
                ],
            },
        },
        {
            "type": "user",
            "sessionId": session,
            "uuid": "r1",
            "timestamp": "2026-02-11T20:00:02.000Z",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": EVIL.format("result", "result"),
                    }
                ],
            },
        },
    ]
    (folder / "session.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    study = root / "study"
    study.mkdir()
    item = EVIL.format("item", "item").replace(",", " ")
    value = EVIL.format("value", "value").replace(",", " ")
    rows = ["item_id,rater,rater_kind,verdict"]
    rows += [f'"{item}",ann,human,"{value}"', f'"{item}",opus,council,no']
    (study / "labels.csv").write_text("\n".join(rows) + "\n")
    return folder, study


def test_markup_from_data_never_reaches_the_page(server, tmp_path, chromium):
    """Hostile text in paths, titles, asks, calls, results, item ids and label values, on every
    page: the browser asks nothing of any origin but the app's own."""
    from urllib.parse import quote

    folder, study = _hostile_workspace(tmp_path)
    source = f"source=folder&folder={quote(str(folder))}"
    with browser_sessions(chromium) as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 2000})
        requests: list[str] = []
        page.on("request", lambda request: requests.append(request.url))

        page.goto(f"{server}/?{source}")
        page.get_by_text("1 of 1 sessions").wait_for(timeout=30_000)
        page_has_run(page)
        for path in ("session", "turn", "catalog", "judge"):
            page.goto(f"{server}/{path}?{source}&session=hostile-session&turn=0")
            page.get_by_role("heading", name=path.capitalize()).wait_for(timeout=30_000)
            page_has_run(page)
        page.goto(f"{server}/agreement")
        labels = page.get_by_role("textbox", name="Labels (folder or file)")
        labels.fill(str(study))
        labels.press("Enter")
        page.get_by_text("Sessions", exact=True).first.wait_for(timeout=30_000)
        page_has_run(page)
        page.locator(".st-key-workbench_navigation").get_by_text("Adjudicate", exact=True).click()
        page.get_by_role("heading", name="Adjudicate").wait_for(timeout=30_000)
        page_has_run(page)
        body = page.inner_text("body")
        browser.close()
    assert "evil.example/value.png" in body  # the hostile label is on the page, as text
    outside = [u for u in requests if not u.startswith(server) and not u.startswith("data:")]
    assert outside == []


def test_back_returns_to_the_previous_page_with_its_data_source(server, screenshots, chromium):
    """A trip through the navigation and back: every history entry names the data source in
    full (no half-written URL), and Back shows the page before, on the same data."""
    with browser_sessions(chromium) as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{server}/?source=alignment", wait_until="networkidle")
        page.get_by_role("heading", name="Sessions").wait_for(timeout=30_000)
        start = page.evaluate("history.length")
        navigation = page.locator(".st-key-workbench_navigation")
        for title in ("Session", "Turn"):
            navigation.get_by_text(title, exact=True).click()
            page.get_by_role("heading", name=title).wait_for(timeout=30_000)
            page_has_run(page)
            assert "source=alignment" in page.url
        entries = page.evaluate("history.length") - start
        assert entries == 2, f"{entries} history entries for two clicks"
        picker = page.get_by_role("combobox", name="Session")
        first = picker.input_value()
        assert first, "the picker names the session shown"
        picker.click()
        page.get_by_role("option").nth(1).click()
        page_has_run(page)
        assert "session=" in page.url
        assert page.evaluate("history.length") - start == 3, "a session picked: one entry"
        page.go_back()
        page_has_run(page)
        assert picker.input_value() == first, "Back shows the session shown before the pick"
        entries = 2
        seen = []
        for _ in range(entries):
            page.go_back()
            page_has_run(page)
            seen.append(page.locator("h1").first.inner_text())
            assert "source=alignment" in page.url, page.url
        assert "Session" in seen
        assert seen[-1] == "Sessions"
        body = page.inner_text("body")
        assert "Traceback" not in body
        page.screenshot(path=str(screenshots / "back.png"), full_page=True)
        browser.close()


def test_back_from_a_step_picked_in_the_steps_table_shows_the_view_before(
    server, screenshots, chromium
):
    """Session, then Turn, then a row of its steps table: each Back shows the view before on
    the first press (the row's step, then the turn's default step, then the Session page),
    and the table's selection never takes the URL back."""
    with browser_sessions(chromium) as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{server}/session?session={RICH}", wait_until="networkidle")
        page.get_by_role("heading", name="Session").wait_for(timeout=30_000)
        page_has_run(page)
        page.locator(".st-key-workbench_navigation").get_by_text("Turn", exact=True).click()
        page.get_by_role("heading", name="Turn", exact=True).wait_for(timeout=30_000)
        page_has_run(page)
        opened = page.get_by_role("heading", name=re.compile(r"^Step \d+")).first.inner_text()
        before = page.url
        assert "step=" not in before  # the turn's default step is not in the URL
        table = page.get_by_test_id("stDataFrame").first
        box = table.bounding_box()
        assert box is not None
        row = 0 if opened != "Step 0" else 1  # a row other than the one open
        page.mouse.click(box["x"] + 15, box["y"] + 35 * (row + 1) + 17)  # its checkbox cell
        page_has_run(page)
        assert f"step={row}" in page.url
        page.get_by_role("heading", name=f"Step {row}").wait_for(timeout=30_000)
        page.screenshot(path=str(screenshots / "1-step-picked.png"))

        page.go_back()
        page_has_run(page)
        assert page.url == before, "the first Back shows the turn as it was"
        page.get_by_role("heading", name=opened).wait_for(timeout=30_000)
        page_has_run(page)
        assert page.url == before, "the table's selection never takes the URL back"
        page.screenshot(path=str(screenshots / "2-back-to-the-turn.png"))

        page.go_back()
        page.get_by_role("heading", name="Session", exact=True).wait_for(timeout=30_000)
        page_has_run(page)
        assert "/session?" in page.url
        assert "turn=" not in page.url
        browser.close()


def test_a_row_that_opens_another_page_is_one_entry_of_history(server, screenshots, chromium):
    """Overview, a row to its Session, a row of its turns to the Turn page: each opening is
    one entry of the browser's history (Streamlit pushes two), so each Back shows the page
    before on the first press, and Forward comes back the same way."""

    def click_first_row() -> None:
        table = page.get_by_test_id("stDataFrame").first
        table.scroll_into_view_if_needed()
        box = table.bounding_box()
        assert box is not None
        page.mouse.click(box["x"] + 15, box["y"] + 35 + 17)  # the first row's checkbox cell

    with browser_sessions(chromium) as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{server}/", wait_until="networkidle")
        page.get_by_role("heading", name="Sessions").wait_for(timeout=30_000)
        page_has_run(page)
        start, overview = page.evaluate("history.length"), page.url
        click_first_row()
        page.get_by_role("heading", name="Session", exact=True).wait_for(timeout=30_000)
        page_has_run(page)
        session = page.url
        assert page.evaluate("history.length") - start == 1, "a row opened: one entry"
        click_first_row()
        page.get_by_role("heading", name="Turn", exact=True).wait_for(timeout=30_000)
        page_has_run(page)
        turn = page.url
        assert page.evaluate("history.length") - start == 2, "another row opened: one entry"

        for move, url, heading in (
            (page.go_back, session, "Session"),
            (page.go_back, overview, "Sessions"),
            (page.go_forward, session, "Session"),
            (page.go_forward, turn, "Turn"),
        ):
            move()
            page_has_run(page)
            assert page.url == url
            assert page.locator("h1").first.inner_text() == heading
        page.screenshot(path=str(screenshots / "forward-to-the-turn.png"))
        browser.close()


def test_a_link_to_a_step_scrolls_its_row_into_view(server, screenshots, chromium):
    """``?step=60`` of a real turn of 151 responses: the steps table opens scrolled to that
    row, selected (Streamlit's tables do not scroll to a selection by themselves)."""
    from urllib.parse import quote

    folder = CORPUS / "claude-code" / "spotter"
    if not folder.is_dir():
        pytest.skip("../shared/corpus is not beside this checkout")
    session = "258c7280-ae70-4798-800f-63464d01a85d"
    with browser_sessions(chromium) as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(
            f"{server}/turn?source=folder&folder={quote(str(folder))}&session={session}"
            "&turn=0&step=60",
            wait_until="networkidle",
        )
        page.get_by_role("heading", name="Step 60").wait_for(timeout=60_000)
        table = page.locator(f'[class*="st-key-steps_{session}_0_full_"]')  # _<row shown>
        scroller = table.locator(".dvn-scroller")
        page.wait_for_function(
            "s => s.scrollTop > 0", arg=scroller.element_handle(), timeout=10_000
        )
        top, height = scroller.evaluate("s => [s.scrollTop, s.clientHeight]")
        row_top = 60 * 35  # rows of 35 px under a 35 px header; step 60 is the 61st row
        assert top < row_top, (top, height)
        assert row_top + 35 < top + height, (top, height)
        table.screenshot(path=str(screenshots / "linked-step-row.png"))
        browser.close()


CUT_IN_A_TABLE = """async (table) => {
  await document.fonts.ready;
  const canvas = table.querySelector('canvas');
  if (!canvas) return [];  // not drawn: in a closed expander
  const fiberKey = Object.keys(canvas).find(key => key.startsWith('__reactFiber'));
  const isGrid = (props) => props && Array.isArray(props.columns)
    && typeof props.getCellContent === 'function'
    && props.columns.every(column => typeof column.width === 'number');
  let fiber = canvas[fiberKey];
  while (fiber && !isGrid(fiber.memoizedProps)) fiber = fiber.return;
  if (!fiber) return ['the grid drawing this table was not found'];
  const {columns, getCellContent, rows} = fiber.memoizedProps;
  const style = getComputedStyle(table.querySelector('.stDataFrameGlideDataEditor'));
  const family = style.getPropertyValue('--gdg-font-family').trim();
  const padding = parseFloat(style.getPropertyValue('--gdg-cell-horizontal-padding'));
  const context = document.createElement('canvas').getContext('2d');
  const needs = (text, fontStyle) => {
    context.font = `${style.getPropertyValue(fontStyle).trim()} ${family}`;
    return context.measureText(text).width + 2 * padding;
  };
  const number = /^[-\\u2212+]?[\\d.,]+%?$|^—$/;
  const cut = [];
  columns.forEach((column, index) => {
    if (!column.title) return;  // the selection's checkboxes
    if (needs(column.title, '--gdg-header-font-style') > column.width + 0.5)
      cut.push(`heading "${column.title}" in ${column.width} px`);
    for (let row = 0; row < Math.min(rows, 300); row++) {
      const text = String(getCellContent([index, row]).displayData ?? '');
      if (number.test(text) && needs(text, '--gdg-base-font-style') > column.width + 0.5)
        cut.push(`"${text}" of "${column.title}" in ${column.width} px`);
    }
  });
  return cut;
}"""
"""What a table cuts: each heading, and each number (or "—") of its first 300 rows, measured
with the grid's own font and padding against the width the grid gave its column. Tables are
drawn on a canvas, so the widths and the cells' text come from the grid's own properties."""


def test_no_table_cuts_a_heading_or_a_number(server, chromium):
    """Every table of every page, on the bundled samples and on a real Claude Code folder:
    each heading whole, and no number cut so that it reads as another ("1." for "1.00")."""
    from urllib.parse import quote

    paths = ["", f"session?session={RICH}", f"turn?session={RICH}&turn=3", "trends", "catalog"]
    paths.append("agreement?source=alignment")
    folder = CORPUS / "claude-code" / "spotter"
    if folder.is_dir():
        real = f"source=folder&folder={quote(str(folder))}"
        paths += [f"?{real}", f"session?{real}", f"turn?{real}&turn=0"]
    cut: dict[str, list[str]] = {}
    tables = 0
    with browser_sessions(chromium) as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        for path in paths:
            page.goto(f"{server}/{path}")
            page.locator("h1").first.wait_for(timeout=60_000)
            page_has_run(page)
            for table in page.get_by_test_id("stDataFrame").all():
                tables += 1
                if found := table.evaluate(CUT_IN_A_TABLE):
                    cut[path] = cut.get(path, []) + found
        browser.close()
    assert tables >= len(paths), "every page walked shows a table"
    assert cut == {}
