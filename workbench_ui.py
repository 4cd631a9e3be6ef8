"""Streamlit helpers shared by the pages: the data source, cached loading, and navigation.

All logic lives in ``analysis``; these helpers only draw widgets and call it. Transcript text
is always shown with ``st.text``/``st.code``/``st.dataframe``, never as markdown or HTML.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import polars as pl
import streamlit as st

import analysis
from analysis.index import Collection
from analysis.ingest import PrivateFolder, save_uploads
from analysis.render import JudgeInput, Step
from analysis.views import step_to_open

if TYPE_CHECKING:
    import altair as alt


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


def page_frame(name: str) -> None:
    """What every page starts with, whether ``app.py`` ran first or Streamlit ran the page file
    alone (a link opened on a freshly started server finds ``pages/`` and does that): the
    page's title and wide layout, the refusal to serve without a data root, and the workbench's
    own navigation (Streamlit's is hidden: ``client.showSidebarNavigation = false``)."""
    st.set_page_config(page_title=f"{PAGES[name].title} · TSQ Workbench", layout="wide")
    refuse_unsafe_serving()
    _source_from_url()
    source = _source_params(_remembered("data_source", SOURCES[0]), _remembered("data_folder", ""))
    judge = {"judge": st.session_state.get("kept_judge")} if "judge" in st.query_params else {}
    carried = {key: value for key, value in (source | judge).items() if value is not None}
    carried |= _url_place()
    with st.sidebar.container(key="workbench_navigation"):
        for page in PAGES.values():  # the data source and the place go along: one entry a click
            st.page_link(page.path, label=page.title, query_params=carried)
    st.sidebar.divider()


SOURCES = ["Bundled sample data", "Bundled alignment sample", "Local folder", "Upload files"]
URL_SOURCES = {"sample": SOURCES[0], "alignment": SOURCES[1], "folder": SOURCES[2]}
ALIGNMENT_SOURCE = SOURCES[1]


def bundled_folders(choice: str) -> list[str]:
    """The folders of a bundled source: the sample's transcripts and judgments (not its
    council_vs_human study: the Agreement page's), or the alignment sample's."""
    sample = analysis.sample_data_dir()
    if choice == ALIGNMENT_SOURCE:
        sample = sample / "alignment"
    return [str(sample / "transcripts"), str(sample / "judgments")]


PLACE = ("session", "turn", "step", "call")
"""Where the user is: in the URL, and carried by the navigation's links to every page."""


_MARKDOWN_ACTIVE = re.compile(r"([\\`*_\[\]()#!<>|~$:])")


def inert(text: str) -> str:
    """Data-derived text for elements that render Markdown (alerts, subheaders): every
    character that could start a link, image, HTML, directive or formatting is escaped."""
    return _MARKDOWN_ACTIVE.sub(r"\\\1", text)


def _remembered(key: str, default: str) -> str:
    """Widget values are per page in Streamlit; the data source must follow the user around."""
    value: str = st.session_state.get(f"kept_{key}", default)
    return value


def _remember(key: str, value: str) -> None:
    st.session_state[f"kept_{key}"] = value


@dataclass
class Workspace:
    """What the pages show: a collection read through the index (lists and counts from its
    tables, a session from its own files when opened), the judgments made on the Judge page
    in this browser session, and the judge whose judgments the pages show (one at a time:
    two judges never mix)."""

    collection: Collection
    fresh: list[analysis.TurnJudgment]
    judge: str | None = None

    @cached_property
    def all_judgments(self) -> list[analysis.TurnJudgment]:
        """Every judge's judgments: those found among the files, then this session's."""
        return analysis.merge_judgments(self.collection.judgments, self.fresh)

    @cached_property
    def judgments(self) -> list[analysis.TurnJudgment]:
        return analysis.of_judge(self.all_judgments, self.judge)

    def session(self, session_id: str | None) -> analysis.Session | None:
        return None if session_id is None else self.collection.session(session_id)

    @cached_property
    def _fresh_findings(self) -> pl.DataFrame | None:
        """Findings of the sessions judged on the Judge page, with the new judgments."""
        if not self.fresh:
            return None
        judged = {j.session_id for j in self.fresh}
        sessions = [s for s in map(self.session, sorted(judged)) if s is not None]
        return analysis.views.findings_frame(analysis.lint(sessions, self.all_judgments))

    @cached_property
    def findings_frame(self) -> pl.DataFrame:
        """Every finding (``analysis.lint`` of the sessions with their judgments)."""
        frame = self.collection.findings_frame
        fresh = self._fresh_findings
        if fresh is None:
            return frame
        judged = list({j.session_id for j in self.fresh})
        kept = frame.filter(~pl.col("session_id").is_in(judged))
        return self.collection.in_session_order(pl.concat([kept, fresh]))

    def findings_of(self, session_id: str) -> list[analysis.Finding]:
        """One session's findings, in ``analysis.lint``'s order."""
        rows = self.findings_frame.filter(pl.col("session_id") == session_id)
        return [analysis.Finding.model_validate(row) for row in rows.iter_rows(named=True)]

    def overview(self) -> pl.DataFrame:
        """One row per session (``analysis.views.session_overview``'s rule, from the index)."""
        base, labels = self.collection.overview_inputs()
        return analysis.views.overview_of(base, labels, self.judgments, self.findings_frame)

    def report(self, show_paths: bool) -> str:
        """The HTML report of every session (from the index; the judged sessions are read
        from their files for their detail)."""
        findings = self.collection.findings(frame=self.findings_frame)
        return analysis.build_report(
            self.collection, self.judgments, findings, show_paths=show_paths
        )


COLLECTION_SECONDS = 300
"""How long the pages reuse what was read of a collection before looking for new or changed
files again (the sidebar's Look again button does it at once)."""


@st.cache_resource(
    show_spinner="Reading the transcripts' index…", ttl=COLLECTION_SECONDS, max_entries=8
)
def open_collection(*folders: str, root: str | None = None, index: str | None = None) -> Collection:
    """The collection under ``folders`` through the index (at ``index``, else the user's),
    brought up to date: once per server for a few minutes, shared by every page and rerun,
    never copied per rerun. With a ``root``, nothing outside it is read (links included)."""
    return Collection(folders, index=index, root=root)


def _release_folder(folder: PrivateFolder) -> None:
    folder.remove()


@st.cache_resource(scope="session", on_release=_release_folder, show_spinner=False)
def _session_folder() -> PrivateFolder:
    """This browser session's own temporary folder (mode 0700), removed when it ends."""
    return PrivateFolder(prefix="tsq-uploads-")


def _uploaded_folder(files: list[Any]) -> str:
    """Uploaded files saved in this session's private folder, under a subfolder named by
    their names and contents (so loading them is cached), each under a safe name."""
    saved = save_uploads(_session_folder().path, [(f.name, f.getvalue()) for f in files])
    return str(saved)


def data_root() -> str | None:
    """The folder local folders must be inside: ``TSQ_DATA_ROOT``, else ``data_root`` in
    ``.streamlit/secrets.toml``; ``None`` when neither is set (any folder may be read)."""
    root = os.environ.get("TSQ_DATA_ROOT")
    if not root and st.secrets.load_if_toml_exists():
        root = st.secrets.get("data_root")
    return str(root) if root else None


def _login_configured() -> bool:
    """Whether the app's secrets configure Streamlit's OIDC login (an ``[auth]`` section)."""
    return bool(st.secrets.load_if_toml_exists() and "auth" in st.secrets)


def refuse_unsafe_serving() -> None:
    """Before any page runs: bound beyond loopback without a data root, say so in one sentence
    and stop; with Streamlit's OIDC login configured, a visitor logs in first."""
    refusal = analysis.serving_refusal(st.get_option("server.address"), data_root())
    if refusal:
        st.error(inert(refusal))
        st.stop()
    if _login_configured() and not st.user.get("is_logged_in"):
        st.info("Log in to open the workbench.")
        st.button("Log in", on_click=st.login, key="login")
        st.stop()


def confined(typed: str, also: tuple[Path, ...] = ()) -> tuple[Path, str | None]:
    """The path to read for what was typed and the root it must stay inside (the data root,
    or one of ``also``; None without a data root); outside them, says why and stops."""
    try:
        path, inside = analysis.ingest.confine(typed, data_root(), also)
    except analysis.ingest.OutsideRoot as error:
        st.error(inert(str(error)))
        st.stop()
    return path, None if inside is None else str(inside)


def _source_from_url() -> None:
    """A link or a reload naming the data source wins over what this browser session kept."""
    named = st.query_params.get("source")
    if named not in URL_SOURCES:
        return
    wanted = {"data_source": URL_SOURCES[named]}
    if named == "folder":
        wanted["data_folder"] = st.query_params.get("folder", "")
    for key, value in wanted.items():
        if _remembered(key, "") != value:
            _remember(key, value)
            st.session_state[key] = value  # the widget too, if this page already drew it


def _source_params(choice: str, typed: str) -> dict[str, str | None]:
    """The URL's words for a data source: a local folder (``?source=folder&folder=…``) or the
    alignment sample (``?source=alignment``); the sample is the default (none)."""
    if choice == "Local folder":
        return {"source": "folder", "folder": typed or None}
    if choice == ALIGNMENT_SOURCE:
        return {"source": "alignment", "folder": None}
    return {"source": None, "folder": None}


EACH_SESSIONS_JUDGE = "each session's own judge"


def chosen_judge(judgments: list[analysis.TurnJudgment]) -> str | None:
    """Which judge's judgments the pages show, where a session was judged by several: a
    sidebar choice, kept for the browser session and in the URL (``?judge=``); by default
    each session's own judge (the one with most judgments in it)."""
    if not analysis.judge.several_judges(judgments):
        _forget("judge")
        return None
    options = [EACH_SESSIONS_JUDGE, *analysis.judge_names(judgments)]
    linked = st.query_params.get("judge", st.session_state.get("kept_judge"))
    kept = linked if linked in options else EACH_SESSIONS_JUDGE
    with st.sidebar:
        judge = st.selectbox(
            "Judge",
            options,
            index=options.index(kept),
            key="chosen_judge",
            help="Some sessions were judged by several judges (judge specs): the pages show one "
            "judge's judgments at a time. Compare judges on the Agreement page or with tsq align.",
        )
    st.session_state["kept_judge"] = judge
    if judge == EACH_SESSIONS_JUDGE:
        _forget("judge")
        return None
    set_url({"judge": judge})
    return judge


def _source_widgets() -> tuple[str, str, list[Any]]:
    """The sidebar controls: (choice, folder as typed, uploaded files)."""
    kept = _remembered("data_source", SOURCES[0])
    with st.sidebar:  # widget state is per page: each page starts from what was kept
        choice = st.radio(
            "Data",
            SOURCES,
            index=SOURCES.index(kept),
            key="data_source",
            on_change=_source_chosen,
        )
        typed, files = "", []
        if choice == "Local folder":
            root = data_root()
            typed = st.text_input(
                "Folder",
                value=_remembered("data_folder", ""),
                placeholder=root or "~/.claude/projects",
                key="data_folder",
                on_change=_source_chosen,
                help=None
                if root is None
                else "A folder inside the data root; a relative path starts there.",
            )
        elif choice == "Upload files":
            files = st.file_uploader(
                "Transcripts, judgments, catalogs",
                type=["jsonl", "json", "ndjson"],
                accept_multiple_files=True,
                key="data_uploads",
            )
    return choice, typed.strip(), list(files or [])


def _source_chosen() -> None:
    """Another data source or folder: kept and in the URL before the page runs again, so that
    the navigation drawn first carries it. Its sessions are others: the place is forgotten."""
    choice = st.session_state["data_source"]
    typed = ""
    if choice == "Local folder":
        typed = st.session_state.get("data_folder", _remembered("data_folder", "")).strip()
    _remember("data_source", choice)
    _remember("data_folder", typed)
    set_url(_source_params(choice, typed) | dict.fromkeys(PLACE))


def _local_folder(typed: str) -> tuple[str, str | None]:
    """The folder typed or linked and the data root it is inside, once it is allowed and
    exists; else says why and stops."""
    if not typed:
        st.info("Type the path of a folder of transcripts in the sidebar to load it.")
        st.stop()
    folder, root = confined(typed)
    if not folder.exists():
        st.error(f"folder not found: {inert(typed)}")
        st.stop()
    return str(folder), root


def data_source() -> Workspace:
    """The sidebar data-source control, shared by every page; returns what was loaded."""
    _source_from_url()
    kept = (_remembered("data_source", SOURCES[0]), _remembered("data_folder", ""))
    choice, typed, files = _source_widgets()
    other = (choice, typed) != kept  # another source picked: its sessions are others
    _remember("data_source", choice)
    _remember("data_folder", typed)
    set_url(_source_params(choice, typed) | (dict.fromkeys(PLACE) if other else {}))
    folders = bundled_folders(choice)
    root = None
    if choice == "Local folder":
        folder, root = _local_folder(typed)
        folders = [folder]
    elif files:
        folders = [_uploaded_folder(files)]
    index = None
    if files:  # uploads have an index of their own, removed with this browser session's folder
        index = str(Path(folders[0]) / ".index.duckdb")
    collection = _collection_or_stop(folders, root, index)
    workspace = Workspace(collection, st.session_state.get("judge_results", []))
    workspace.judge = chosen_judge(workspace.all_judgments)
    return workspace


def _collection_or_stop(folders: list[str], root: str | None, index: str | None) -> Collection:
    """The collection, or one sentence on why the index cannot be read, and the page stops."""
    with st.sidebar:
        if st.button(
            "Look again",
            key="look_again",
            help="Read new and changed files now "
            f"(the pages look again by themselves every {COLLECTION_SECONDS // 60} minutes).",
        ):
            open_collection.clear()
    try:
        return open_collection(*folders, root=root, index=index)
    except analysis.index.IndexProblem as error:
        st.error(inert(f"{error}."))
        st.stop()


def issues_panel(workspace: Workspace) -> None:
    issues = workspace.collection.issues()
    if not issues:
        return
    with st.expander(f"{len(issues)} parse issue{'' if len(issues) == 1 else 's'}"):
        st.dataframe([issue.model_dump() for issue in issues], hide_index=True)


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


def open_step(session_id: str, turn_index: int, step_index: int, call: str | None) -> None:
    """The Turn page at one step; ``call`` names the call that spawned a subagent's step."""
    subagent = {"call": call} if call else {}
    open_page("turn", session=session_id, turn=turn_index, step=step_index, **subagent)


def set_url(wanted: dict[str, str | None]) -> None:
    """The URL's parameters with ``wanted`` set (None: removed), changed in one step and only
    when something changes: each change of the URL is an entry of the browser's history, and
    one action must be one entry, never a half-written URL."""
    current = st.query_params.to_dict()
    updated = {key: value for key, value in current.items() if wanted.get(key, value) is not None}
    updated |= {key: value for key, value in wanted.items() if value is not None}
    if updated != current:
        st.query_params.from_dict(updated)


def _forget(*keys: str) -> None:
    set_url(dict.fromkeys(keys))


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
    ids = workspace.collection.session_ids
    if not ids:
        st.info(inert(workspace.collection.why_empty()))
        return None
    current = st.query_params.get("session")
    if current is not None and current not in ids:
        first = workspace.collection.session_names[ids[0]]
        st.warning(
            f"No session {inert(str(current))} in the data loaded: showing {inert(first)} instead."
        )
    st.session_state["session_pick"] = current if current in ids else ids[0]  # Back, links
    session_id = st.selectbox(
        "Session",
        ids,
        format_func=workspace.collection.session_names.__getitem__,
        key="session_pick",
        on_change=_session_picked,
        help="Type to find one by its title, first ask or id.",
    )
    _show_place(_session_place(session_id, current), chosen=False)
    return workspace.session(session_id)


def _session_picked() -> None:
    """A session picked: in the URL before the page runs again, so that the navigation drawn
    first already carries it; another session starts at its turn 0."""
    picked = st.session_state["session_pick"]
    _show_place(_session_place(picked, st.query_params.get("session")), chosen=True)


def _turn_picked() -> None:
    """A turn picked: in the URL before the page runs again (see :func:`_session_picked`)."""
    picked = str(st.session_state["turn_pick"])
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
    st.session_state["turn_pick"] = int(raw) if valid and raw is not None else 0
    index = st.number_input(
        "Turn", min_value=0, max_value=count - 1, key="turn_pick", on_change=_turn_picked
    )
    _show_place(_turn_place(str(index), raw), chosen=False)  # another turn: its own steps
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
    its row picked); picking a row puts its step in the URL."""
    columns = [c for c in STEP_COLUMNS if c != "parent_call_id" or steps[c].is_not_null().any()]
    rows = []
    if opened is not None:
        place = (pl.col("step_index") == opened.index) & (
            pl.col("parent_call_id").eq_missing(opened.parent_call_id)
        )
        rows = steps.with_row_index("row").filter(place)["row"].to_list()[:1]
    event = st.dataframe(
        steps.select(columns).with_columns(pl.col("^parent_call_id$").fill_null("")),
        hide_index=True,
        on_select="rerun",
        selection_mode="single-row",
        selection_default={"selection": {"rows": rows}} if rows else None,
        placeholder="—",
        key=key,
        column_config=STEP_COLUMNS,
    )
    if rows:
        _scroll_to_row(key, rows[0])
    if event.selection.rows and event.selection.rows != rows:  # not the step already open
        picked = steps.row(event.selection.rows[0], named=True)
        _show_place(_step_place(picked["step_index"], picked["parent_call_id"]), chosen=True)


ROW_PIXELS = 35
"""The height of a row of ``st.dataframe`` (its default ``row_height``)."""


def _scroll_to_row(key: str, row: int) -> None:
    """Scroll the table ``key`` so that its selected ``row`` shows (Streamlit's tables do not
    scroll to a selection by themselves; a link to ``?step=107`` must show that row). The
    script carries no data: only the table's key, made of ids and numbers, and the row."""
    selector = json.dumps(f".st-key-{key} .dvn-scroller")
    st.html(
        f"""<script>
        (() => {{
          let tries = 40;
          const scroll = () => {{
            const scroller = document.querySelector({selector});
            if (scroller && scroller.scrollHeight > scroller.clientHeight) {{
              scroller.scrollTop = Math.max(0, {row * ROW_PIXELS} - scroller.clientHeight / 3);
            }} else if (tries-- > 0) {{
              setTimeout(scroll, 100);
            }}
          }};
          scroll();
        }})();
        </script>""",
        unsafe_allow_javascript=True,
        width="content",
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


def _scroll_height(text: str) -> int | Literal["content"]:
    """Long text scrolls in a box of its own instead of stretching the page."""
    return 360 if text.count("\n") > 18 or len(text) > 2500 else "content"


def transcript_text(text: str) -> None:
    """Transcript text as text: short text inline, long text in a scrolling box."""
    if _scroll_height(text) == "content":
        st.text(text)
    else:
        st.code(text, language=None, wrap_lines=True, height=_scroll_height(text))


def call_panel(call: analysis.ToolCall) -> None:
    """One call: its tool and input (as JSON), then its result as the page shows results
    (:func:`analysis.views.result_view`): formatted JSON or wrapped text, long ones in a box
    of their own, with their length."""
    st.markdown(f"**{inert(call.name)}** · call {inert(call.id)}")
    arguments = json.dumps(call.input, indent=2, ensure_ascii=False)
    st.code(arguments, language="json", wrap_lines=True, height=_scroll_height(arguments))
    view = analysis.views.result_view(call.result)
    st.caption(view.caption)
    if view.kind == "json":
        st.code(view.text, language="json", wrap_lines=True, height=_scroll_height(view.text))
    elif view.kind == "text" and view.text:
        st.code(view.text, language=None, wrap_lines=True, height=_scroll_height(view.text))


def judge_input_panel(rendered: JudgeInput, called: list[str]) -> None:
    """What the judge read for one step, part by part, as text: the menu first."""
    subagent = rendered.parent_call_id is not None
    count = len(rendered.tools)
    st.markdown(
        f"**The menu it chose from: {count} tool{'' if count == 1 else 's'}** "
        f"({rendered.catalog_basis.replace('+', ' + ')} catalog, {rendered.condition} condition)"
    )
    st.text(f"Menu: {rendered.catalog_note}.")
    menu = analysis.views.judged_menu(rendered.tools, called)
    st.dataframe(
        menu,
        hide_index=True,
        height=min(38 + 35 * menu.height, 320),
        column_config={"description": st.column_config.TextColumn(width="large")},
    )
    run = "the subagent's run" if subagent else "this turn"
    ask, context = st.columns(2)
    with ask:
        st.caption("The ask the judge got")
        transcript_text(rendered.ask)
    with context:
        st.caption("Prior context the judge got (earlier turns, summarised)")
        none = "a subagent is judged on its prompt alone" if subagent else "this is the first turn"
        transcript_text(rendered.prior_context or f"(none: {none})")
    st.caption(f"{run.capitalize()} so far, as the judge read it (earlier steps, oldest first)")
    trajectory = rendered.trajectory or f"(none: this is the first step of {run})"
    st.code(trajectory, language=None, wrap_lines=True, height=_scroll_height(trajectory))
    st.caption("The output it judged, with the calls")
    output = rendered.output or "(no output)"
    st.code(output, language=None, wrap_lines=True, height=_scroll_height(output))
    st.text(f"Cut to fit: {'; '.join(rendered.cuts)}." if rendered.cuts else "Nothing was cut.")


def votes_side_by_side(judgment: analysis.TurnJudgment) -> None:
    """Each judge's verdict and reasoning, in columns."""
    columns = st.columns(max(1, len(judgment.votes)))
    for number, (column, vote) in enumerate(zip(columns, judgment.votes, strict=False), start=1):
        column.markdown(f"**Judge {number}: {vote.verdict}**")
        column.text(vote.reasoning)


def chosen_session_and_turn(workspace: Workspace) -> tuple[analysis.Session, analysis.Turn]:
    """The session and turn named in the URL (or picked); stops the page when there is none."""
    session = chosen_session(workspace)
    turn = chosen_turn(session) if session else None
    if session is None or turn is None:
        st.stop()
    return session, turn


@dataclass
class StudyView:
    """A council-vs-human study and its decision store."""

    path: str
    study: analysis.Study
    store: analysis.AdjudicationStore
    root: str | None = None
    """The folder the study was read inside (the data root or the bundled samples), if any."""

    def tables(self) -> analysis.StudyTables:
        """The five tables, computed once until a decision is saved (in any tab or process)."""
        return load_study_tables(self.path, str(self.store.path), self.store.version(), self.root)

    def agreement(self, by: Literal["rater", "kind"]) -> analysis.AgreementReport:
        """Every pair of raters (or rater kinds), with bootstrap intervals: once per study."""
        return load_agreement_report(self.path, by, self.root)


@st.cache_data(show_spinner="Loading labels…")
def load_study(path: str, root: str | None = None) -> analysis.Study:
    """The study at ``path``; with a ``root``, nothing outside it is read (links included)."""
    return analysis.load_study(path, data_root=root)


@st.cache_resource
def decision_store(path: str) -> analysis.AdjudicationStore:
    """One store per file for the whole server: it opens a connection per call."""
    return analysis.AdjudicationStore(path)


@st.cache_data(show_spinner="Computing the agreement tables…", max_entries=32)
def load_study_tables(
    path: str, store_path: str, version: int, root: str | None = None
) -> analysis.StudyTables:
    """The study's five tables for one state of its decision store: ``version`` (the store's
    latest decision id) is part of the key, so a saved decision is never served stale."""
    study = load_study(path, root)
    return analysis.study_tables(study, decision_store(store_path))


@st.cache_data(show_spinner="Computing pairwise agreement…", max_entries=32)
def load_agreement_report(
    path: str, by: Literal["rater", "kind"], root: str | None = None
) -> analysis.AgreementReport:
    """Pairwise agreement (1,000 bootstrap resamples a pair) once per study and grouping."""
    study = load_study(path, root)
    return analysis.agreement_report(study.labels, by=by)


def _default_study() -> str:
    return str(analysis.sample_data_dir() / "council_vs_human")


def study_source() -> StudyView:
    """The sidebar control choosing the labels (default: the bundled synthetic study); with a
    data root, labels inside it or the bundled samples only."""
    with st.sidebar:
        typed = st.text_input(
            "Labels (folder or file)",
            value=_remembered("study_path", _default_study()),
            key="study_path",
        )
        _remember("study_path", typed)
    found, root = confined(typed.strip() or _default_study(), (analysis.sample_data_dir(),))
    path = str(found)
    try:
        study = load_study(path, root)
    except analysis.study.LabelError as error:
        st.error(inert(str(error)))
        st.stop()
    store = decision_store(str(analysis.study.default_store_path(path)))
    st.sidebar.caption(f"Decisions are saved in `{store.path}`")
    if study.issues:
        with st.expander(f"{len(study.issues)} issues in the labels"):
            st.dataframe([issue.model_dump() for issue in study.issues], hide_index=True)
    return StudyView(path=path, study=study, store=store, root=root)


def study_store_path() -> Path:
    """Where people's step labels from the Turn page are saved: for the bundled alignment
    sample, its label store (the one ``tsq align`` keeps its split in); else the decision store
    of the study the Agreement page shows (the one typed in its sidebar, kept for this browser
    session; default: the bundled study's), beside the adjudications."""
    if _remembered("data_source", SOURCES[0]) == ALIGNMENT_SOURCE:
        return analysis.align.sample_store().path
    typed = _remembered("study_path", _default_study()).strip() or _default_study()
    try:
        path, _ = analysis.ingest.confine(typed, data_root(), (analysis.sample_data_dir(),))
    except analysis.ingest.OutsideRoot:  # refused on the Agreement page: the bundled study's
        path = Path(_default_study())
    return analysis.study.default_store_path(path)


def worded_table(frame: pl.DataFrame) -> tuple[pl.DataFrame, dict[str, Any]]:
    """``frame`` and column settings that head its columns in words and write its numbers as
    the report does (``analysis._format``: shares as percentages with one decimal, fractions
    with two, counts with separators); shares are scaled to percent for that."""
    from analysis import header

    shown, shares = _shares_in_percent(frame)
    settings: dict[str, Any] = {}
    for column, dtype in frame.schema.items():
        if column in shares:
            settings[column] = st.column_config.NumberColumn(header(column), format=PERCENT)
        elif dtype.is_float():
            settings[column] = st.column_config.NumberColumn(header(column), format="%.2f")
        elif dtype.is_integer():
            settings[column] = st.column_config.NumberColumn(header(column), format="localized")
        else:
            settings[column] = header(column)
    return shown, settings


PERCENT = "%.1f%%"
"""How a table column of shares is written once scaled to percent: one decimal."""


def _shares_in_percent(frame: pl.DataFrame) -> tuple[pl.DataFrame, list[str]]:
    """``frame`` with its columns of shares (``analysis.PERCENT_COLUMNS``) scaled to percent,
    for :data:`PERCENT`, and their names."""
    from analysis import PERCENT_COLUMNS

    shares = [column for column in frame.columns if column in PERCENT_COLUMNS]
    return frame.with_columns(pl.col(shares) * 100), shares


def people_labels() -> list[analysis.study.StepLabel]:
    """People's current step labels in the store the Turn page saves them to (none yet: no
    store)."""
    store = study_store_path()
    return analysis.AdjudicationStore(store).step_labels() if store.exists() else []


LABELLER_KEY = "kept_labeller"


def step_label_panel(item_id: str, store_path: Path) -> None:
    """A person's label of one step's tool choice (correct or incorrect, with a reason), saved
    in the store at ``store_path`` (created on the first save); the labeller's name is kept for
    this browser session. The step's labels so far are listed below, the latest of each
    labeller."""
    from analysis.study import StepLabel

    st.markdown("**Your label for this step's tool choice**")
    with st.form("step_label_form"):
        value = st.radio(
            "The tool choice was",
            ["correct", "incorrect"],
            index=None,
            horizontal=True,
            key="label_value",
        )
        reason = st.text_area("Reason", key="label_reason")
        labeller = st.text_input(
            "Your name", value=st.session_state.get(LABELLER_KEY, ""), key="label_labeller"
        )
        submitted = st.form_submit_button("Save label")
        said = st.empty()  # what a save says, beside its button
    if submitted:
        name = labeller.strip()
        if value is None:
            said.warning("Choose correct or incorrect: no label is saved without a choice.")
        elif not name:
            said.warning("Give your name, so your labels are told apart from others'.")
        else:
            st.session_state[LABELLER_KEY] = name
            decision_store(str(store_path)).save_step_label(
                StepLabel.model_validate(
                    {"item_id": item_id, "labeller": name, "value": value, "reason": reason.strip()}
                )
            )
            said.success(f"Saved: {inert(name)} labelled this step's tool choice {value}.")
    if not store_path.exists():
        st.caption(
            "Split: not assigned yet (a session is put in dev or test, for good, the "
            "first time its labels are measured: tsq align, or the Agreement page)."
        )
        return
    store = decision_store(str(store_path))
    split = store.splits().get(item_id.split(":", 1)[0])
    st.caption(
        f"Split: **{split.split}** (fixed when this session's labels were first measured)"
        if split is not None
        else "Split: not assigned yet (a session is put in dev or test, for good, the first "
        "time its labels are measured: tsq align, or the Agreement page)."
    )
    labels = [label for label in store.step_labels() if label.item_id == item_id]
    if labels:
        st.caption(f"Labels of this step ({inert(item_id)}), saved in {inert(str(store.path))}")
        st.dataframe(
            [
                {
                    "labeller": label.labeller,
                    "label": label.value,
                    "reason": label.reason,
                    "labelled at": label.labelled_at.strftime("%Y-%m-%d %H:%M"),
                }
                for label in labels
            ],
            hide_index=True,
        )


def workspace_judgments() -> tuple[list[analysis.TurnJudgment], list[str]]:
    """The judgments of the data source the other pages show (kept for this browser session),
    with the SELF_PREFERENCE warnings about them, without drawing its controls: the bundled
    sample or a local folder, plus judgments made on the Judge page. Uploaded files are per
    page: only the latter. Every judge's judgments are kept (the Agreement page compares each
    judge with people as a rater of its own)."""
    choice = _remembered("data_source", SOURCES[0])
    folders = bundled_folders(choice)
    root = None
    if choice == "Local folder":
        typed = _remembered("data_folder", "")
        try:
            folder, inside = analysis.ingest.confine(typed, data_root())
        except analysis.ingest.OutsideRoot:
            folders = []
        else:
            root = None if inside is None else str(inside)
            folders = [str(folder)] if typed and folder.exists() else []
    elif choice == "Upload files":
        folders = []
    fresh: list[analysis.TurnJudgment] = st.session_state.get("judge_results", [])
    if not folders:
        return fresh, []
    workspace = Workspace(_collection_or_stop(folders, root, None), fresh)
    warnings = workspace.findings_frame.filter(pl.col("code") == "SELF_PREFERENCE")["message"]
    return workspace.all_judgments, list(dict.fromkeys(warnings))


def disagreement_panel(view: StudyView, row: dict[str, Any]) -> None:
    """One disagreement: both labels, the suggested cause, the rule, the decision, transcript."""
    spec = view.study.labels.spec(row["field"])
    st.subheader(inert(f"{row['item_id']} · {row['field']}"))
    if spec.description:
        st.caption(inert(spec.description))
    left, right = st.columns(2)
    left.metric("Human", inert(str(row["human"])))
    right.metric("Council", inert(str(row["council"])))
    st.text(cause_in_words(row))
    st.text(f"Rule proposes: {row['proposal_side'] or 'nothing'} ({row['proposal_reason']})")
    if row["adjudicator"]:
        note = f" — {row['note']}" if row["note"] else ""
        st.text(
            f"Decided by {row['adjudicator']} ({row['adjudicator_kind']}): {row['side']} side, "
            f"cause {row['cause']}{note}"
        )
    transcript_panel(view.study.sessions.get(row["item_id"]))


def cause_in_words(row: dict[str, Any]) -> str:
    """The disagreement's cause as its table row gives it (``cause``), and where it came from."""
    if row["cause"] is None:
        return "Cause: none suggested by the labels, none decided yet"
    if row["cause_from"] == "decision":
        suggested = row["suggested_cause"]
        aside = (
            f"; the labels suggested {suggested}" if suggested and suggested != row["cause"] else ""
        )
        return f"Cause: {row['cause']} (decided by {row['adjudicator']}{aside})"
    return f"Cause: {row['cause']} (suggested by the labels; not decided yet)"


def transcript_panel(session: analysis.Session | None) -> None:
    """The session as the Turn page reads it, in an expander: each turn's ask, then its steps
    (each response's text and its calls, as the judge reads a call)."""
    from analysis.render import render_call, turn_steps

    with st.expander("Transcript", expanded=False):
        if session is None:
            st.caption("No transcript of this session was loaded with the labels.")
            return
        for turn in session.turns:
            st.markdown(f"**Turn {turn.index}** · {len(turn.messages)} responses")
            transcript_text(turn.ask or "(no ask)")
            lines = []
            for step in turn_steps(turn, text_steps=True):
                said = " ".join(step.message.text.split())
                calls = "; ".join(render_call(call) for call in step.message.tool_calls)
                lines.append(
                    f"step {step.index}: "
                    + " → ".join(part for part in (said[:300], calls) if part)
                )
            if lines:
                transcript_text("\n".join(lines))


def show_table(frame: pl.DataFrame, **options: Any) -> Any:
    """A table with shares written as percentages with one decimal, as in the charts and the
    report (``analysis._format``), and kappas with three decimals; its columns keep their
    names."""
    shown, shares = _shares_in_percent(frame)
    config = {name: st.column_config.NumberColumn(format=PERCENT) for name in shares} | {
        name: st.column_config.NumberColumn(format="%.3f")
        for name in frame.columns
        if "kappa" in name or "alpha" in name
    }
    return st.dataframe(shown, hide_index=True, column_config=config, **options)


def chart_downloads(chart: alt.TopLevelMixin, name: str) -> None:
    """PNG and SVG download buttons for a chart; the files are drawn only when clicked."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "chart"
    formats: list[tuple[str, str, str, Callable[[alt.TopLevelMixin], bytes | str]]] = [
        ("PNG", "png", "image/png", analysis.views.chart_to_png),
        ("SVG", "svg", "image/svg+xml", analysis.views.chart_to_svg),
    ]
    for column, (label, suffix, mime, render) in zip(st.columns([1, 1, 6]), formats, strict=False):
        column.download_button(
            label,
            data=partial(render, chart),
            file_name=f"{stem}.{suffix}",
            mime=mime,
            on_click="ignore",
            icon=":material/download:",
            key=f"download_{stem}_{suffix}",
        )
