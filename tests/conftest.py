from __future__ import annotations

import functools
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pytest

import analysis

if TYPE_CHECKING:
    from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
needs_chromium = pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed"
)


def launch_chromium(playwright: Any) -> Any:
    """Debian's Chromium, headless, with its background network traffic turned off."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """One Chromium for a module's browser tests (starting one costs about a second of CPU),
    each test's pages in browser sessions of their own (:func:`browser_sessions`)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        yield browser
        browser.close()


class BrowserSessions:
    """What a test opens pages with: each page in a browser context of its own (no cookie or
    storage shared with another test's), all closed with :meth:`close`."""

    def __init__(self, chromium: Any) -> None:
        self._chromium = chromium
        self._contexts: list[Any] = []

    def new_page(self, **options: Any) -> Any:
        context = self._chromium.new_context(**options)
        self._contexts.append(context)
        return context.new_page()

    def close(self) -> None:
        while self._contexts:
            self._contexts.pop().close()


@contextmanager
def browser_sessions(chromium: Any) -> Iterator[BrowserSessions]:
    sessions = BrowserSessions(chromium)
    try:
        yield sessions
    finally:
        sessions.close()


def page_has_run(page: Any, timeout: float = 60_000) -> None:
    """Until the Streamlit page in ``page`` has run after a load or an interaction: a moment
    for a rerun to start, then no skeleton, no script running, and a moment to draw."""
    page.wait_for_timeout(250)
    page.wait_for_function(
        "!document.querySelector('[data-testid=\"stSkeleton\"]')"
        " && document.querySelector('[data-testid=\"stApp\"]')"
        " && document.querySelector('[data-testid=\"stApp\"]')"
        ".getAttribute('data-test-script-state') !== 'running'",
        timeout=timeout,
    )
    page.wait_for_timeout(250)


CORPUS = REPO.parent / "shared" / "corpus"
SAMPLES = REPO / "sample_data"
SAMPLE_FOLDERS = [p for p in sorted(SAMPLES.iterdir()) if p.is_dir() and p.name != "alignment"]
"""The bundled sample but its alignment set (whose two judges test_align.py covers)."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``--dist loadgroup``), the tests of one module that start a
    Streamlit server or drive Chromium run one after another on one worker: a module's
    browsers do not compete for the cores, and the ports are each held from the moment they
    are chosen (``streamlit_server.reserved_port``), so modules on different workers never
    meet on one."""
    for item in items:
        module = getattr(item, "module", None)
        if item.get_closest_marker("browser") or hasattr(module, "streamlit_server"):
            item.add_marker(pytest.mark.xdist_group(f"served-{item.path.stem}"))


@pytest.fixture(scope="session", autouse=True)
def own_user_folders(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The user's cache folder (the index's home) and data folder (the session registry's and
    the decision store's) are the test run's own, for every test and the processes they start:
    no test reads or writes the index or the registry of the person running them."""
    names = ("XDG_CACHE_HOME", "XDG_DATA_HOME", "TSQ_DATA_DIR")
    saved = {name: os.environ.get(name) for name in names}
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache"))
    os.environ["XDG_DATA_HOME"] = str(tmp_path_factory.mktemp("data"))
    os.environ.pop("TSQ_DATA_DIR", None)
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


CLAUDE_CODE_TRANSCRIPTS = sorted((CORPUS / "claude-code").glob("*/*.jsonl"))
"""The real Claude Code main transcripts (their subagent files sit in folders beside them)."""


@pytest.fixture(scope="session")
def loaded() -> tuple[Any, Any]:
    """The bundled sample data but its alignment set (tested in test_align.py), loaded and
    diagnosed once: (LoadResult, findings)."""
    result = analysis.load(SAMPLE_FOLDERS)
    return result, analysis.collect_findings(result.sessions, result.judgments)


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is not beside this checkout")
    return CORPUS


@pytest.fixture(scope="session")
def claude_code_sessions() -> dict[str, Any]:
    """The real Claude Code transcripts, loaded once: file name -> session."""
    if not CLAUDE_CODE_TRANSCRIPTS:
        pytest.skip("../shared/corpus is not beside this checkout")
    loaded = analysis.load(CLAUDE_CODE_TRANSCRIPTS).sessions
    return {Path(session.source).name: session for session in loaded}


WriteJsonl = Callable[..., Path]


@pytest.fixture
def write_jsonl(tmp_path: Path) -> WriteJsonl:
    """Write records (dicts, or raw strings/bytes taken as-is) as JSON Lines."""

    def write(
        records: list[Any], name: str = "session.jsonl", trailing_newline: bool = True
    ) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        chunks = []
        for record in records:
            if isinstance(record, bytes):
                chunks.append(record)
            elif isinstance(record, str):
                chunks.append(record.encode())
            else:
                chunks.append(json.dumps(record, separators=(",", ":")).encode())
        data = b"\n".join(chunks) + (b"\n" if trailing_newline else b"")
        path.write_bytes(data)
        return path

    return write


# The workbench under Streamlit's AppTest: shared by test_app, test_app_agreement and
# test_export_charts.

APP = REPO / "app.py"
PAGE_FILES = sorted(f"pages/{page.name}" for page in (REPO / "pages").glob("*.py"))
"""Every page of the app, as ``AppTest.switch_page`` takes it."""
BAD = "5eed0000-0000-4000-8000-000000000001"
"""The product brief's four-turn "bad choices" sample session."""
RICH = "5eed0000-0000-4000-8000-000000000002"
"""The sample session with a subagent, parallel calls and a split vote."""
SAMPLE_WORKSPACE = [
    analysis.sample_data_dir() / "transcripts",
    analysis.sample_data_dir() / "judgments",
]
"""What the workbench loads of the bundled sample: not the council study (the Agreement page's)."""
HOSTILE = "<script>alert(1)</script><img src=x onerror=alert(2)> ![x](https://evil.example/p.png)"
"""Transcript text that would run, load or format something if it were shown as HTML/Markdown."""


def clear_streamlit_caches() -> None:
    """What a server restart forgets: every ``st.cache_data`` and ``st.cache_resource``."""
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()


@contextmanager
def server_address(address: str | None) -> Iterator[None]:
    """Streamlit's ``server.address`` as a server bound there would have it, for AppTest."""
    from streamlit import config

    saved = config.get_option("server.address")
    config.set_option("server.address", address)
    try:
        yield
    finally:
        config.set_option("server.address", saved)


SERVING_SETTINGS = (
    "TSQ_DATA_ROOT",
    "TSQ_SERVED",
    "TSQ_AUTH",
    "TSQ_AUTH_HEADER",
    "TSQ_ENDPOINTS",
    "TSQ_MAX_RUN_USD",
    "TSQ_MAX_DAY_USD",
    "TSQ_MAX_UPLOAD_FILES",
    "TSQ_MAX_UPLOAD_MB",
)
"""The operator's settings of a served workbench: none unless a test sets them."""


@pytest.fixture
def fresh_app(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """The workbench as a new server starts it, as ``make run`` does (on localhost): no cached
    data, no API key, no serving setting (data root, served, auth, endpoints), and the
    decision store (``TSQ_DATA_DIR``) in this test's own folder. The collections already read
    (``st.cache_resource``, keyed by their folders, data root and index) stay, as a running
    server keeps them: reading the sample again for every test would only cost time."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    for setting in SERVING_SETTINGS:
        monkeypatch.delenv(setting, raising=False)
    monkeypatch.setenv("TSQ_DATA_DIR", str(tmp_path / "data"))
    import streamlit as st

    st.cache_data.clear()  # the collections read stay (st.cache_resource), as a server keeps them
    with server_address("localhost"):
        yield


@functools.cache
def _scan_components_once() -> None:
    """Streamlit looks through every installed package for components each time an AppTest
    starts (reading thousands of metadata files: a third of a page test's time). The packages
    do not change while the tests run, so the first scan's answer serves the rest."""
    from streamlit.components.v2 import manifest_scanner

    manifest_scanner.scan_component_manifests = functools.cache(  # type: ignore[method-assign]
        manifest_scanner.scan_component_manifests
    )


def open_app(state: dict[str, Any] | None = None) -> AppTest:
    """The workbench's first page, run once; ``state`` goes into its session state first."""
    from streamlit.testing.v1 import AppTest

    _scan_components_once()

    at = AppTest.from_file(str(APP), default_timeout=60)
    for key, value in (state or {}).items():
        at.session_state[key] = value
    return at.run()


def open_page(path: str, state: dict[str, Any] | None = None, **params: str) -> AppTest:
    """A page opened by a link: the app runs, then the page with ``params`` in its URL."""
    at = open_app(state)
    for key, value in params.items():
        at.query_params[key] = value
    return at.switch_page(path).run()


def use_folder(at: AppTest, folder: Path | str) -> AppTest:
    """Choose a local folder as the data source in the sidebar, as a user types it."""
    at.sidebar.radio(key="data_source").set_value("Local folder").run()
    at.sidebar.text_input(key="data_folder").set_value(str(folder)).run()
    return at


def data_root_workspace(base: Path) -> tuple[Path, Path]:
    """Under ``base``: a data root whose ``projects`` holds the bad-choices sample, a folder
    ``outside`` it holding the embedded-subagent sample, and inside the root ``link``, a
    symlink to ``outside``. Returns (root, outside)."""
    root, outside = base / "root", base / "outside"
    (root / "projects").mkdir(parents=True)
    outside.mkdir()
    transcripts = analysis.sample_data_dir() / "transcripts"
    shutil.copy(transcripts / "bad-choices.synthetic.jsonl", root / "projects")
    shutil.copy(transcripts / "embedded-subagent.synthetic.jsonl", outside)
    (root / "link").symlink_to(outside, target_is_directory=True)
    return root, outside


@pytest.fixture(scope="session")
def sample_workspace() -> Any:
    """The bundled sample as the workbench loads it (``SAMPLE_WORKSPACE``): a LoadResult."""
    return analysis.load(SAMPLE_WORKSPACE)


@pytest.fixture
def hostile_transcript(write_jsonl: WriteJsonl, tmp_path: Path) -> Path:
    """A folder with one session, ``h``, whose ask and answer are both ``HOSTILE``; the answer
    is words only, so the turn has no step."""
    write_jsonl(
        [
            {
                "type": "user",
                "sessionId": "h",
                "uuid": "u1",
                "message": {"role": "user", "content": HOSTILE},
            },
            {
                "type": "assistant",
                "sessionId": "h",
                "uuid": "a1",
                "message": {
                    "id": "m",
                    "role": "assistant",
                    "content": [{"type": "text", "text": HOSTILE}],
                },
            },
        ]
    )
    return tmp_path


def plain(shown: str) -> str:
    """Text as a person reads it on the page: data shown in Markdown elements is escaped
    (``workbench.inert``), and the backslashes are not displayed."""
    return re.sub(r"\\(.)", r"\1", shown)


JUDGMENT_LINE_FIELDS = {
    "session_id",
    "turn_index",
    "step_index",
    "message_id",
    "parent_call_id",
    "score",
    "votes",
    "n_requested",
    "n_valid",
    "n_discarded",
    "model",
    "judge_id",
    "spec_name",
    "condition",
    "catalog_size",
    "call_rendered",
    "context_chars",
    "step_chars",
    "unscored_reason",
    "usage",
    "cost_usd",
    "rater",
    "via",
}
"""The JSONL contract of ``tsq judge --out``, as docs/judge.md states it."""


def assert_seed_ablation_contract(lines: list[dict[str, Any]]) -> None:
    """``tsq judge --ablation`` on the product brief's bad-choices session, with the fake
    judges of either provider: 12 lines of the contract, and the brief's ablation scores
    (bare passes everything, catalog without call fails everything, full fails the bad ones)."""
    assert len(lines) == 12
    assert set(lines[0]) == JUDGMENT_LINE_FIELDS
    judges = {line["condition"]: line["judge_id"] for line in lines}
    assert all(judge.startswith("tsq-rubric/3#") for judge in judges.values())
    assert len(set(judges.values())) == 3  # a spec's hash covers its condition
    by_condition: dict[str, list[float]] = {}
    for line in lines:
        by_condition.setdefault(line["condition"], []).append(line["score"])
    assert by_condition == {
        "bare": [1.0] * 4,
        "catalog_no_call": [0.0] * 4,
        "full": [1.0, 0.0, 0.0, 0.0],
    }


ARTIFACTS = REPO / "test-artifacts"
"""Where browser tests keep their screenshots (CI keeps the folder; git ignores it)."""


@pytest.fixture
def screenshots(request: pytest.FixtureRequest) -> Path:
    """This test's folder of screenshots under ``test-artifacts/``, emptied first."""
    folder = ARTIFACTS / request.node.name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


def indexed_at(index: Path) -> dict[str, Any]:
    """When the index at ``index`` last parsed each of its files (its ``files`` table): equal
    before and after a command means the command read the index without parsing anything."""
    import duckdb

    with duckdb.connect(str(index), read_only=True) as conn:
        return dict(conn.execute("SELECT path, indexed_at FROM files").fetchall())


def run_tsq(
    *args: str, env: Mapping[str, str | None] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``tsq ARGS`` in a process of its own, as a user runs it: this process's environment with
    ``env`` over it (a None value unsets a variable); one that does not finish within
    ``timeout`` seconds fails the test."""
    environment = dict(os.environ)
    for name, value in (env or {}).items():
        if value is None:
            environment.pop(name, None)
        else:
            environment[name] = value
    return subprocess.run(
        [sys.executable, "-m", "analysis", *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=timeout,
    )


def tsq(
    *args: str, env: Mapping[str, str | None] | None = None, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``tsq ARGS`` in this process (click's ``CliRunner``), with ``env`` over this process's
    environment (a None value unsets a variable) and ``input`` on stdin: the exit code, stdout
    and stderr a user would see, without starting an interpreter. An exception that escapes
    the command is written to stderr as a traceback with exit code 1, as ``python -m analysis``
    would. What only a real process shows (the entry point itself, import weight, signals,
    several processes at once, a hang) is tested through :func:`run_tsq`."""
    import traceback

    from click.testing import CliRunner

    from analysis.cli import cli

    result = CliRunner(env=dict(env or {})).invoke(cli, list(args), input=input)
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        assert result.exc_info is not None
        stderr += "".join(traceback.format_exception(*result.exc_info))
    return subprocess.CompletedProcess(["tsq", *args], result.exit_code, result.stdout, stderr)


def load_script(name: str) -> ModuleType:
    """``scripts/NAME.py`` as a module (``scripts/`` is not a package)."""
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
