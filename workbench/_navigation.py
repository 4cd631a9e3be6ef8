"""The pages, their navigation, and the place (session, turn, step) each page opens at."""

from __future__ import annotations

import json
from typing import NamedTuple

import polars as pl
import streamlit as st

import analysis
from analysis.models import Step
from analysis.views import step_to_open
from workbench._panels import codes_in_words
from workbench._source import (
    SOURCES,
    Workspace,
    refuse_unsafe_serving,
    remembered,
    source_from_url,
    source_params,
    visitor_panel,
)
from workbench._state import Kept, Key
from workbench._text import inert
from workbench._url import PLACE, set_url


class Page(NamedTuple):
    path: str
    title: str


PAGES = {
    "overview": Page("pages/overview.py", "Overview"),
    "trends": Page("pages/trends.py", "Trends"),
    "session": Page("pages/session.py", "Session"),
    "turn": Page("pages/turn.py", "Turn"),
    "catalog": Page("pages/catalog.py", "Catalog"),
    "judge": Page("pages/judge.py", "Judge"),
    "agreement": Page("pages/agreement.py", "Agreement"),
    "adjudicate": Page("pages/adjudicate.py", "Adjudicate"),
}
"""Every page of the workbench, in the order of its navigation: the one list ``app.py``
registers and each page draws."""


ONE_ENTRY_A_SWITCH = """<script>
(() => {
  if (window.tsqOneEntryASwitch) return;
  window.tsqOneEntryASwitch = true;
  const push = history.pushState.bind(history);
  let queryChanged = null;
  const forget = () => { queryChanged = null; };
  for (const event of ["pointerdown", "keydown", "popstate"]) addEventListener(event, forget, true);
  history.pushState = (state, unused, url) => {
    const target = new URL(url, location.href);
    const sameSearch = target.search === location.search;
    if (queryChanged === location.href && sameSearch && target.pathname !== location.pathname) {
      queryChanged = null;
      history.replaceState(state, unused, url);
      return;
    }
    push(state, unused, url);
    queryChanged = target.pathname === location.pathname ? location.href : null;
  };
})();
</script>"""
"""Another page opened from a page's own action (``st.switch_page`` with query parameters)
is one entry of the browser's history, so that one Back returns to the page before. Streamlit
pushes two: the page one was on with the new query, then the new page with it. Without a
click or a key pressed between them, the second entry takes the place of the first."""


def page_frame(name: str) -> None:
    """What every page starts with, whether ``app.py`` ran first or Streamlit ran the page file
    alone (a link opened on a freshly started server finds ``pages/`` and does that): the
    page's title and wide layout, the refusal to serve without a data root, the workbench's
    own navigation (Streamlit's is hidden: ``client.showSidebarNavigation = false``) with
    :data:`ONE_ENTRY_A_SWITCH`, and who is in."""
    st.set_page_config(page_title=f"{PAGES[name].title} · TSQ Workbench", layout="wide")
    refuse_unsafe_serving()
    source_from_url()
    source = source_params(
        remembered(Kept.DATA_SOURCE, SOURCES[0]), remembered(Kept.DATA_FOLDER, "")
    )
    judge = {"judge": st.session_state.get(Kept.JUDGE)} if "judge" in st.query_params else {}
    carried = {key: value for key, value in (source | judge).items() if value is not None}
    carried |= _url_place()
    with st.sidebar.container(key="workbench_navigation"):
        for page in PAGES.values():  # the data source and the place go along: one entry a click
            st.page_link(page.path, label=page.title, query_params=carried)
        st.html(ONE_ENTRY_A_SWITCH, unsafe_allow_javascript=True, width="content")
    visitor_panel()
    st.sidebar.divider()


def open_page(page: str, **params: str | int) -> None:
    st.switch_page(
        PAGES[page].path, query_params={key: str(value) for key, value in params.items()}
    )


def stay_at_step(session_id: str, turn_index: int, step_index: int, call: str | None) -> None:
    """From the Turn page, another step: its place in the URL, and the page drawn again
    (switching to the page one is on would keep the old place)."""
    place = {"session": session_id, "turn": str(turn_index), "step": str(step_index)}
    set_url(dict.fromkeys(PLACE) | place | ({"call": call} if call else {}))
    st.rerun()


def stay_at_session(session_id: str) -> None:
    """From the Session page, another session, at its first turn."""
    set_url(dict.fromkeys(PLACE) | {"session": session_id})
    st.rerun()


def open_step(session_id: str, turn_index: int, step_index: int, call: str | None) -> None:
    """The Turn page at one step; ``call`` names the call that spawned a subagent's step."""
    subagent = {"call": call} if call else {}
    open_page("turn", session=session_id, turn=turn_index, step=step_index, **subagent)


def _url_place() -> dict[str, str]:
    """Where the user is: the session, turn, step and call the URL names. The URL alone says
    it: a place the page picked by default is not in it, and the same URL picks it again."""
    return {key: value for key in PLACE if (value := st.query_params.get(key)) is not None}


def _show_place(place: dict[str, str | None], *, chosen: bool) -> None:
    """A place the user chose is put in the URL, in one step: one history entry. A default the
    page picked stays out of it, save where the URL named another: a visit is one entry, and
    Back shows what was there."""
    set_url(place if chosen else {k: v for k, v in place.items() if k in st.query_params})


def _session_place(session_id: str, before: str | None) -> dict[str, str | None]:
    """A session, and the rest of the place forgotten when it is another one."""
    return {"session": session_id} | ({} if session_id == before else dict.fromkeys(PLACE[1:]))


def _turn_place(turn: str, before: str | None) -> dict[str, str | None]:
    return {"turn": turn} | ({} if turn == before else dict.fromkeys(PLACE[2:]))


def _step_place(step_index: int, call: str | None) -> dict[str, str | None]:
    return {"step": str(step_index), "call": call or None}


def chosen_session(workspace: Workspace) -> analysis.Session | None:
    """The session named in the URL, else the first, in a picker. A link to a session that is
    not loaded is said in one line."""
    ids = workspace.collection.session_ids  # never empty: data_source stops the page first
    current = st.query_params.get("session")
    if current is not None and current not in ids:
        first = workspace.collection.session_names[ids[0]]
        st.warning(
            f"No session {inert(str(current))} in the data loaded: showing {inert(first)} instead."
        )
    st.session_state[Key.SESSION_PICK] = current if current in ids else ids[0]  # Back, links
    session_id = st.selectbox(
        "Session",
        ids,
        format_func=workspace.collection.session_names.__getitem__,
        key=Key.SESSION_PICK,
        on_change=_session_picked,
        help="Type to find one by its title, first ask or id.",
    )
    _show_place(_session_place(session_id, current), chosen=False)
    return workspace.session(session_id)


def _session_picked() -> None:
    """A session picked: in the URL before the page runs again, so that the navigation drawn
    first already carries it; another session starts at its turn 0."""
    picked = st.session_state[Key.SESSION_PICK]
    _show_place(_session_place(picked, st.query_params.get("session")), chosen=True)


def _turn_picked() -> None:
    """A turn picked: in the URL before the page runs again (see :func:`_session_picked`)."""
    picked = str(st.session_state[Key.TURN_PICK])
    _show_place(_turn_place(picked, st.query_params.get("turn")), chosen=True)


def chosen_turn(session: analysis.Session) -> analysis.Turn | None:
    """The turn named in the URL, else turn 0; a link to a turn not there is said."""
    if not session.turns:
        st.info("This session has no turns.")
        return None
    count = len(session.turns)
    raw = st.query_params.get("turn")
    valid = raw is not None and raw.isdecimal() and int(raw) < count
    if raw is not None and not valid:
        st.warning(
            f"This session has no turn {raw}: its turns are 0 to {count - 1}; turn 0 is shown."
        )
    st.session_state[Key.TURN_PICK] = int(raw) if valid and raw is not None else 0
    index = st.number_input(
        "Turn", min_value=0, max_value=count - 1, key=Key.TURN_PICK, on_change=_turn_picked
    )
    # another turn than the URL's (no turn in it: turn 0) has its own steps
    _show_place(_turn_place(str(index), "0" if raw is None else raw), chosen=False)
    return session.turns[int(index)]


STEP_COLUMNS = {
    "step_index": st.column_config.NumberColumn("step"),
    "parent_call_id": st.column_config.TextColumn("subagent of call"),
    "tools": st.column_config.ListColumn("tools"),
    "score": st.column_config.NumberColumn("TSQ", format="%.2f"),
    "votes_label": st.column_config.TextColumn("votes"),
    "findings": st.column_config.ListColumn("findings"),
}


def _steps_table(steps: pl.DataFrame, key: str, opened: Step | None) -> None:
    """The steps as a table, the ``opened`` one's row selected (a link to ``?step=107`` shows
    its row picked); picking a row puts its step in the URL.

    The URL leads, the table follows: the table is drawn anew for each step the URL opens (its
    key ends with that step's row), so Back, which changes the URL alone, shows the step
    before with its row selected; a pick puts its step in the URL (one history entry) and the
    page runs again at once, so the table picked in is not drawn again and its pick is
    forgotten: it never takes the URL back."""
    columns = [c for c in STEP_COLUMNS if c != "parent_call_id" or steps[c].is_not_null().any()]
    rows = []
    if opened is not None:
        place = (pl.col("step_index") == opened.index) & (
            pl.col("parent_call_id").eq_missing(opened.parent_call_id)
        )
        rows = steps.with_row_index("row").filter(place)["row"].to_list()[:1]
    table = f"{key}_{rows[0] if rows else 'none'}"
    event = st.dataframe(
        steps.select(columns).with_columns(
            pl.col("^parent_call_id$").fill_null(""),
            codes_in_words("findings"),
        ),
        hide_index=True,
        on_select="rerun",
        selection_mode="single-row",
        selection_default={"selection": {"rows": rows}} if rows else None,
        placeholder="—",
        key=table,
        column_config=STEP_COLUMNS,
    )
    if rows:
        _scroll_to_row(table, rows[0])
    if event.selection.rows and event.selection.rows != rows:  # not the step already open
        picked = steps.row(event.selection.rows[0], named=True)
        _show_place(_step_place(picked["step_index"], picked["parent_call_id"]), chosen=True)
        st.rerun()  # drawn as the new URL's table: this one, and its pick, are forgotten


ROW_PIXELS = 35
"""The height of a row of ``st.dataframe`` (its default ``row_height``)."""


def _when_drawn(selector: str, ready: str, act: str) -> None:
    """Run ``act`` on the element ``selector`` finds (``found`` in the script) once ``ready``
    holds of it, trying every tenth of a second for four seconds: the element may be drawn
    after the script runs. The scripts carry no data: only keys made of ids and numbers."""
    st.html(
        f"""<script>
        (() => {{
          let tries = 40;
          const attempt = () => {{
            const found = document.querySelector({json.dumps(selector)});
            if (found && ({ready})) {{
              {act}
            }} else if (tries-- > 0) {{
              setTimeout(attempt, 100);
            }}
          }};
          attempt();
        }})();
        </script>""",
        unsafe_allow_javascript=True,
        width="content",
    )


def _scroll_to_row(key: str, row: int) -> None:
    """Scroll the table ``key`` so that its selected ``row`` shows (Streamlit's tables do not
    scroll to a selection by themselves; a link to ``?step=107`` must show that row)."""
    _when_drawn(
        f".st-key-{key} .dvn-scroller",
        "found.scrollHeight > found.clientHeight",
        f"found.scrollTop = Math.max(0, {row * ROW_PIXELS} - found.clientHeight / 3);",
    )


def detail_into_view(key: str, picked: object) -> None:
    """Scroll the container ``key`` — the detail a row ``picked`` in a long table opened below
    it — into view, once for each pick (not again on the reruns that follow)."""
    seen = f"{key}__brought"
    if st.session_state.get(seen) == picked:
        return
    st.session_state[seen] = picked
    _when_drawn(
        f".st-key-{key}", "true", 'found.scrollIntoView({block: "start", behavior: "smooth"});'
    )


def chosen_step(turn: analysis.Turn, steps: pl.DataFrame, key: str) -> Step | None:
    """The turn's steps (its rows of ``step_table``) as a table, and the one step to open:

    the row picked, else the step the URL names (``?step=``, ``&call=`` for a subagent's),
    else the worst-scoring. A link to a step that is not there is said in one line. Keeps the
    URL in step. ``key`` names the table: give each session, turn and condition its own.
    """

    def to_open() -> tuple[Step | None, str | None]:
        return step_to_open(turn, steps, st.query_params.get("step"), st.query_params.get("call"))

    if not steps.is_empty():
        opened, missing = to_open()
        _steps_table(steps, key, None if missing else opened)  # a bad link: nothing picked
    step, problem = to_open()  # the row picked, if one was
    if problem:
        st.warning(problem)
    if step is not None:
        _show_place(_step_place(step.index, step.parent_call_id), chosen=False)
    return step


def chosen_session_and_turn(workspace: Workspace) -> tuple[analysis.Session, analysis.Turn]:
    """The session and turn named in the URL (or picked); stops the page when there is none."""
    session = chosen_session(workspace)
    turn = chosen_turn(session) if session else None
    if session is None or turn is None:
        st.stop()
    return session, turn
