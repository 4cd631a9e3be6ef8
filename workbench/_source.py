"""The data source every page shares: the sidebar controls, the collection read through
the index, uploads, the serving rules (a data root, a login, the endpoints a request may go
to), and the judge whose judgments the pages show."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import polars as pl
import streamlit as st

import analysis
from analysis.index import Collection
from analysis.ingest import PrivateFolder, UploadLimits, save_uploads
from analysis.llm import (
    ENDPOINTS_ENV,
    KEY_ENVS,
    EndpointRules,
    ListedEndpoint,
    ProviderName,
    endpoints_from_env,
    endpoints_from_table,
)
from analysis.models import ScorerRecord
from workbench._state import Kept, Key
from workbench._text import inert
from workbench._url import PLACE, forget, set_url

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


def remembered(kept: Kept, default: str) -> str:
    """Widget values are per page in Streamlit; the data source must follow the user around."""
    value: str = st.session_state.get(kept, default)
    return value


def remember(kept: Kept, value: str) -> None:
    st.session_state[kept] = value


@dataclass
class Workspace:
    """What the pages show: a collection read through the index (lists and counts from its
    tables, a session from its own files when opened), the judgments made on the Judge page
    in this browser session, and the judge whose judgments the pages show (one at a time:
    two judges never mix)."""

    collection: Collection
    fresh: list[analysis.Judgment]
    judge: str | None = None

    @cached_property
    def all_judgments(self) -> list[analysis.Judgment]:
        """Every judge's judgments: those found among the files, then this session's."""
        return analysis.merge_judgments(self.collection.judgments, self.fresh)

    @cached_property
    def judgments(self) -> list[analysis.Judgment]:
        """The judgments the pages count: each session's own judge's, or the chosen judge's
        (a trained scorer chosen: its judgments from the index, read then)."""
        if self.judge is not None and self.judge in self.collection.scorer_ids:
            return analysis.of_judge(self._with_scorers(), self.judge)
        return analysis.of_judge(self.all_judgments, self.judge)

    def _with_scorers(self) -> list[analysis.Judgment]:
        """Every judgment, those trained scorers wrote into the index too (read when asked:
        a collection's can be many)."""
        return analysis.merge_judgments(self.collection.every_judgment(), self.fresh)

    def judgments_of(self, session_id: str) -> list[analysis.Judgment]:
        """One session's judgments as the pages show them: the judge's, else (chosen, or where
        no LLM judge judged it) a trained step scorer's from the index (``tsq score``)."""
        mine = [j for j in self.all_judgments if j.session_id == session_id]
        scored = self.collection.scorer_judgments([session_id])
        return analysis.of_judge(analysis.merge_judgments(mine, scored), self.judge)

    def session(self, session_id: str | None) -> analysis.Session | None:
        return None if session_id is None else self.collection.session(session_id)

    @cached_property
    def _fresh_findings(self) -> pl.DataFrame | None:
        """Findings of the sessions judged on the Judge page, with the new judgments."""
        if not self.fresh:
            return None
        judged = {j.session_id for j in self.fresh}
        sessions = [s for s in map(self.session, sorted(judged)) if s is not None]
        return analysis.views.findings_frame(
            analysis.collect_findings(sessions, self.all_judgments)
        )

    @cached_property
    def findings_frame(self) -> pl.DataFrame:
        """Every finding (``analysis.collect_findings`` of the sessions with their judgments)."""
        frame = self.collection.findings_frame
        fresh = self._fresh_findings
        if fresh is None:
            return frame
        judged = list({j.session_id for j in self.fresh})
        kept = frame.filter(~pl.col("session_id").is_in(judged))
        return self.collection.in_session_order(pl.concat([kept, fresh]))

    def findings_of(self, session_id: str) -> list[analysis.Finding]:
        """One session's findings, in ``analysis.collect_findings``' order."""
        rows = self.findings_frame.filter(pl.col("session_id") == session_id)
        return [analysis.Finding.model_validate(row) for row in rows.iter_rows(named=True)]

    def overview(self) -> pl.DataFrame:
        """One row per session (``analysis.views.session_overview``'s rule, from the index),
        with its Q-score where a trained step scorer scored it (``Collection.q_scores``)."""
        base, labels = self.collection.overview_inputs()
        overview = analysis.views.overview_of(base, labels, self.judgments, self.findings_frame)
        _, q_scores = self.collection.q_scores
        return overview.join(q_scores, on="session_id", how="left") if q_scores.height else overview

    def report(self, show_paths: bool) -> str:
        """The HTML report of every session (from the index; the judged sessions are read
        from their files for their detail)."""
        findings = self.collection.findings(frame=self.findings_frame)
        judgments = analysis.of_judge(self._with_scorers(), self.judge)
        return analysis.build_report(self.collection, judgments, findings, show_paths=show_paths)


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
    their names and contents (so loading them is cached), each under a safe name. Served,
    more files or megabytes than the operator allows are refused in one sentence, and the
    page stops."""
    if serving().served:
        try:
            refusal = UploadLimits.from_env(os.environ).refusal([f.size for f in files])
        except ValueError as error:
            refusal = str(error)
        if refusal is not None:
            st.error(inert(refusal))
            st.stop()
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


def serving() -> analysis.Serving:
    """How this app is run: its address, ``TSQ_SERVED``, the data root and how people log in
    (``TSQ_AUTH``, the secrets' ``[auth]`` section, ``TSQ_AUTH_HEADER``)."""
    return analysis.Serving(
        address=st.get_option("server.address"),
        root=data_root(),
        served_flag=os.environ.get("TSQ_SERVED"),
        auth=os.environ.get("TSQ_AUTH"),
        login_configured=_login_configured(),
        auth_header=os.environ.get("TSQ_AUTH_HEADER"),
    )


def _login_on(how: analysis.Serving) -> bool:
    """Whether visitors log in with Streamlit's login (served or not, when it is configured)."""
    return how.auth_mode == "login" and how.login_configured


def _logged_in() -> bool:
    return bool(st.user.get("is_logged_in"))


def _request_headers() -> list[tuple[str, str]]:
    """The headers of the request that opened this browser session, a name repeated as often
    as it was sent (none when no browser sent any, as in a test run)."""
    headers = st.context.headers
    return [(name, value) for name in headers for value in headers.get_all(name)]


def visitor() -> str | None:
    """Who saves what this browser session saves (``analysis.visitor_identity``): served,
    the logged-in email, the proxy's header or "anonymous"; local, None (a name is typed).
    Served without an identity, says why in one sentence and the page stops."""
    how = serving()
    email = st.user.get("email") if how.auth_mode == "login" and _logged_in() else None
    try:
        return analysis.visitor_identity(
            how, email if isinstance(email, str) else None, _request_headers()
        )
    except analysis.UnknownVisitor as unknown:
        st.error(inert(str(unknown)))
        st.stop()


def visitor_panel() -> None:
    """In the sidebar: who is in (the logged-in email, with a Log out button; served behind a
    proxy, the name its header gives); nothing when no one logs in."""
    how = serving()
    if _login_on(how) and _logged_in():
        email = st.user.get("email")
        with st.sidebar.container(key="visitor"):
            st.caption(f"Logged in as {inert(str(email or 'someone without an email'))}")
            st.button("Log out", on_click=st.logout, key="logout")
    elif how.served and how.auth_mode == "proxy":
        st.sidebar.caption(f"Signed in as {inert(visitor() or '')}")


def saving_as(who: str) -> None:
    """Where a name field would be, served: the name this form saves under."""
    st.caption(f"Saving as {inert(who)}")


def refuse_unsafe_serving() -> None:
    """Before any page runs: served without a data root or without a way people log in, say so
    in one sentence and stop; with Streamlit's login, a visitor logs in first; a served visitor
    the workbench cannot name (no email, no proxy header) is told so in one sentence, and the
    page stops; served to anyone on purpose (``TSQ_AUTH=none``), say so at the top of every
    page."""
    how = serving()
    refusal = how.refusal()
    if refusal:
        st.error(inert(refusal))
        st.stop()
    if _login_on(how) and not _logged_in():
        st.info("Log in to open the workbench.")
        st.button("Log in", on_click=st.login, key="login")
        st.stop()
    visitor()
    if how.anonymous:
        st.warning(analysis.ANONYMOUS_WARNING, icon=":material/public:")


def key_environment() -> dict[str, str]:
    """The environment, with any API key set in the app's secrets on top (the judge and the
    council read their keys from it)."""
    env = dict(os.environ)
    if st.secrets.load_if_toml_exists():
        for name in (name for names in KEY_ENVS.values() for name in names):
            value = st.secrets.get(name)
            if isinstance(value, str) and value:
                env[name] = value
    return env


def _listed_key_environment(listed: list[ListedEndpoint]) -> dict[str, str]:
    """The providers' keys, and the keys listed endpoints name (from the environment or the
    secrets), by variable: all that a served request may carry."""
    env = key_environment()
    keys = {name: env[name] for names in KEY_ENVS.values() for name in names if env.get(name)}
    secrets = st.secrets if st.secrets.load_if_toml_exists() else {}
    for name in (e.key for e in listed if e.key):
        value = secrets.get(name) or os.environ.get(name)
        if isinstance(value, str) and value:
            keys[name] = value
    return keys


def endpoint_rules() -> EndpointRules | None:
    """Served: the endpoints the operator lists (``[endpoints]`` in the secrets, then
    ``TSQ_ENDPOINTS``) with the keys they may receive; None when local (the user's choice).
    Raises ``EndpointError`` when the operator's list cannot be read."""
    if not serving().served:
        return None
    listed = []
    if st.secrets.load_if_toml_exists() and "endpoints" in st.secrets:
        listed += endpoints_from_table(st.secrets["endpoints"], ".streamlit/secrets.toml")
    listed += endpoints_from_env(os.environ.get(ENDPOINTS_ENV, ""))
    return EndpointRules(tuple(listed), _listed_key_environment(listed))


OWN_API = "The provider's own API"


def endpoint_choice(
    rules: EndpointRules | None, provider: ProviderName, given: str | None
) -> str | None:
    """Where the judge's requests go (None: the provider's own API). Local, a text field
    (``Key.JUDGE_BASE_URL``, which the page fills with a spec's base URL). Served, a choice of
    the provider's own API and the endpoints the operator lists, never a text field; a spec
    naming an endpoint outside them (``given``) is refused in one sentence and the page stops."""
    if rules is None:
        typed: str = st.text_input(
            "Base URL (optional)",
            key=Key.JUDGE_BASE_URL,
            help="Another endpoint of the model's API, e.g. a vLLM or Ollama server for openai:.",
        )
        return typed.strip() or None
    refusal = rules.refusal(provider, given, "The judge spec's endpoint")
    if refusal:
        st.error(inert(refusal))
        st.stop()
    listed = {f"{e.name} · {e.base_url}": e.base_url for e in rules.listed}
    options = [OWN_API, *listed]
    named = None if given is None else rules.listed_at(given)
    default = f"{named.name} · {named.base_url}" if named is not None else OWN_API
    choice = st.selectbox(
        "Endpoint",
        options,
        index=options.index(default),
        key=f"judge_endpoint_{default}",  # a spec naming another endpoint starts from it
        help="Where the judge's requests go: the model provider's own API, or an endpoint the "
        "operator of this workbench allows.",
    )
    return listed.get(choice)


def confined(typed: str, also: tuple[Path, ...] = ()) -> tuple[Path, str | None]:
    """The path to read for what was typed and the root it must stay inside (the data root,
    or one of ``also``; None without a data root); outside them, says why and stops."""
    try:
        path, inside = analysis.ingest.confine(typed, data_root(), also)
    except analysis.ingest.OutsideRoot as error:
        st.error(inert(str(error)))
        st.stop()
    return path, None if inside is None else str(inside)


def source_from_url() -> None:
    """A link or a reload naming the data source wins over what this browser session kept."""
    named = st.query_params.get("source")
    if named not in URL_SOURCES:
        return
    remember(Kept.DATA_SOURCE, URL_SOURCES[named])  # the controls start from what is kept
    if named == "folder":
        remember(Kept.DATA_FOLDER, st.query_params.get("folder", ""))


def source_params(choice: str, typed: str) -> dict[str, str | None]:
    """The URL's words for a data source: a local folder (``?source=folder&folder=…``) or the
    alignment sample (``?source=alignment``); the sample is the default (none)."""
    if choice == "Local folder":
        return {"source": "folder", "folder": typed or None}
    if choice == ALIGNMENT_SOURCE:
        return {"source": "alignment", "folder": None}
    return {"source": None, "folder": None}


EACH_SESSIONS_JUDGE = "each session's own judge"


def chosen_judge(
    judgments: list[analysis.Judgment],
    records: Mapping[str, ScorerRecord],
    scorer_ids: Sequence[str] = (),
) -> str | None:
    """Which judge's judgments the pages show, where a session was judged by several: a
    sidebar choice, kept for the browser session and in the URL (``?judge=``); by default
    each session's own judge (the one with most judgments in it). The trained scorers of
    ``scorer_ids`` (those that scored steps in the index) are among the choices, each named as
    one, with its test agreement where ``records`` (the index's) holds it."""
    names = [*analysis.judge.judge_names(judgments), *scorer_ids]
    if len(set(names)) < 2 and not analysis.judge.several_judges(judgments):
        forget("judge")
        return None
    options = [EACH_SESSIONS_JUDGE, *dict.fromkeys(names)]
    linked = st.query_params.get("judge", st.session_state.get(Kept.JUDGE))
    kept = linked if linked in options else EACH_SESSIONS_JUDGE
    scorers = analysis.judge.scorers_among(judgments, records) | {
        name: records.get(name) for name in scorer_ids
    }
    with st.sidebar:
        judge = st.selectbox(
            "Judge",
            options,
            index=options.index(kept),
            format_func=lambda name: analysis.judge.rater_in_words(name, scorers),
            key="chosen_judge",
            help="Some sessions were judged by several judges (judge specs): the pages show one "
            "judge's judgments at a time. Compare judges on the Agreement page or with tsq align.",
        )
    st.session_state[Kept.JUDGE] = judge
    if judge == EACH_SESSIONS_JUDGE:
        forget("judge")
        return None
    set_url({"judge": judge})
    return judge


def _source_widgets() -> tuple[str, str, list[Any]]:
    """The sidebar controls: (choice, folder as typed, uploaded files)."""
    # Widget state is per page: each page's controls start from what was kept (a choice is
    # kept by the controls' callbacks before the page runs again). They are given it through
    # their keys, never also as a default (Streamlit warns of a widget given both).
    st.session_state[Key.DATA_SOURCE] = remembered(Kept.DATA_SOURCE, SOURCES[0])
    with st.sidebar:
        choice = st.radio("Data", SOURCES, key=Key.DATA_SOURCE, on_change=_source_chosen)
        typed, files = "", []
        if choice == "Local folder":
            root = data_root()
            st.session_state[Key.DATA_FOLDER] = remembered(Kept.DATA_FOLDER, "")
            typed = st.text_input(
                "Folder",
                placeholder=root or "~/.claude/projects",
                key=Key.DATA_FOLDER,
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
    choice = st.session_state[Key.DATA_SOURCE]
    typed = ""
    if choice == "Local folder":
        typed = st.session_state.get(Key.DATA_FOLDER, remembered(Kept.DATA_FOLDER, "")).strip()
    remember(Kept.DATA_SOURCE, choice)
    remember(Kept.DATA_FOLDER, typed)
    set_url(source_params(choice, typed) | dict.fromkeys(PLACE))


def kept_folders(choice: str, typed: str) -> tuple[list[str], str | None, str | None]:
    """The folders a bundled source or a local folder reads, and the data root the folder is
    inside: (folders, root, why none) — one rule for the pages that draw the source's controls
    and those that only read the kept source. Uploads are per page: none here."""
    if choice == "Upload files":
        return [], None, None
    if choice != "Local folder":
        return bundled_folders(choice), None, None
    if not typed:
        return [], None, "Type the path of a folder of transcripts in the sidebar to load it."
    try:
        folder, inside = analysis.ingest.confine(typed, data_root())
    except analysis.ingest.OutsideRoot as error:
        return [], None, str(error)
    if not folder.exists():
        return [], None, f"folder not found: {typed}"
    return [str(folder)], None if inside is None else str(inside), None


CHOOSE_ANOTHER = "Choose another folder or upload files in the sidebar."


def data_source() -> Workspace:
    """The sidebar data-source control, shared by every page; returns what was loaded."""
    source_from_url()
    kept = (remembered(Kept.DATA_SOURCE, SOURCES[0]), remembered(Kept.DATA_FOLDER, ""))
    choice, typed, files = _source_widgets()
    other = (choice, typed) != kept  # another source picked: its sessions are others
    remember(Kept.DATA_SOURCE, choice)
    remember(Kept.DATA_FOLDER, typed)
    set_url(source_params(choice, typed) | (dict.fromkeys(PLACE) if other else {}))
    folders, root, problem = kept_folders(choice, typed)
    if problem is not None:
        (st.info if not typed else st.error)(inert(problem))
        st.stop()
    if files:
        folders = [_uploaded_folder(files)]
    index = None
    if files:  # uploads have an index of their own, removed with this browser session's folder
        index = str(Path(folders[0]) / ".index.duckdb")
    collection = collection_or_stop(folders, root, index)
    if not collection.session_ids:  # every page: nothing to show says why, and what to do
        st.info(inert(f"{collection.why_empty()} {CHOOSE_ANOTHER}"))
        issues_panel(collection)
        st.stop()
    workspace = Workspace(collection, st.session_state.get(Key.JUDGE_RESULTS, []))
    workspace.judge = chosen_judge(
        workspace.all_judgments, workspace.collection.scorers, workspace.collection.scorer_ids
    )
    return workspace


def collection_or_stop(folders: list[str], root: str | None, index: str | None) -> Collection:
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


def issues_panel(collection: Collection) -> None:
    """The collection's parse issues, grouped, in an expander (none: nothing)."""
    issues = collection.issues()
    if not issues:
        return
    groups = analysis.ingest.grouped_issues(issues)
    with st.expander(analysis.counted(len(issues), "parse issue")):
        st.caption(
            "Issues of one file with one reason are one row, with how many there are and on "
            "which lines; `tsq ingest --json` lists each."
        )
        rows = [
            {"file": g.file, "reason": g.reason, "count": g.count, "lines": g.lines_in_words()}
            for g in groups
        ]
        st.dataframe(
            rows,
            hide_index=True,
            column_config={
                "reason": st.column_config.TextColumn(width="large"),
                "lines": st.column_config.TextColumn(width="medium"),
            },
        )


def scorer_folders(workspace: Workspace) -> dict[str, str]:
    """The trained scorers a cascade may use, by name: those ``tsq score`` recorded for the
    collection (where it read them) and the bundled one; never a folder a visitor types."""
    found = {
        f"{record.name} ({record.scorer_id})": record.folder
        for record in workspace.collection.scorers.values()
        if record.folder is not None and Path(record.folder, "card.json").is_file()
    }
    found["sample-step-scorer (bundled)"] = str(analysis.sample_data_dir() / "scorer")
    return found
