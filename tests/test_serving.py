"""The workbench served for real, checked with the operating system and a real browser: the
way ``make run`` starts it listens on loopback only; bound beyond it, no page runs without a
data root, and with one a folder outside it is refused; uploads live in a private folder of
the browser session and are gone when it ends."""

from __future__ import annotations

import stat
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from conftest import BAD, data_root_workspace, needs_chromium, page_has_run
from streamlit_server import (
    REPO,
    accepts,
    is_loopback_ip,
    other_addresses,
    streamlit_command,
    streamlit_server,
)

import analysis

SAMPLES = analysis.sample_data_dir()
PAGES = ["", "session", "turn", "catalog", "judge", "agreement", "adjudicate"]
NO_ROOT = (
    "This workbench listens at 0.0.0.0, beyond this machine, and has no data root, so its "
    "pages are off: set TSQ_DATA_ROOT (or data_root in .streamlit/secrets.toml) to the folder "
    "it may read, or serve it on localhost."
)


def make_run() -> list[str]:
    """``make run`` in the checkout, with this interpreter's environment (its set-up step
    ``.venv/.installed`` taken as done)."""
    stamp = ".venv/.installed"
    bin_folder = Path(sys.executable).parent
    return [
        "make",
        "--no-print-directory",
        "-C",
        str(REPO),
        "-o",
        stamp,
        "run",
        f"BIN={bin_folder}",
    ]


@pytest.fixture(scope="module")
def open_server():
    """Bound to every IPv4 interface on purpose, without a data root."""
    with streamlit_server(streamlit_command("--server.address", "0.0.0.0")) as server:
        yield server


@pytest.fixture(scope="module")
def rooted_server(tmp_path_factory):
    """Bound to every IPv4 interface with a data root, open to anyone on purpose
    (``TSQ_AUTH=none``): ``root`` holds ``projects`` (one transcript) and ``link``, a symlink
    to ``outside`` (another)."""
    root, outside = data_root_workspace(tmp_path_factory.mktemp("served"))
    command = streamlit_command("--server.address", "0.0.0.0")
    env = {"TSQ_DATA_ROOT": str(root), "TSQ_AUTH": "none"}
    with streamlit_server(command, env=env) as server:
        yield server, root, outside


def test_make_run_listens_on_loopback_only():
    with streamlit_server(make_run()) as server:
        listening = server.listening()
        assert {port for _, port in listening} == {server.port}
        assert listening  # IPv4, and IPv6 where the machine has it
        assert all(is_loopback_ip(address) for address, _ in listening), listening
        assert accepts("127.0.0.1", server.port)
        for address in other_addresses():  # another machine's way in is closed
            assert not accepts(address, server.port), address


def test_bound_to_0_0_0_0_it_listens_beyond_loopback(open_server):
    """The check above can fail: the same server bound on purpose is reachable from outside."""
    listening = open_server.listening()
    assert ("0.0.0.0", open_server.port) in listening
    for address in other_addresses():
        if ":" not in address:
            assert accepts(address, open_server.port), address


def _visit(chromium: Any, url: str, wait_for: str, then: str | None = None) -> dict[str, int]:
    """Open ``url`` in a new browser session, wait for the text ``wait_for`` (and the element
    with test id ``then``), let the page settle; count what else is there."""
    visitor = chromium.new_context()
    tab = visitor.new_page()
    tab.goto(url)
    tab.get_by_text(wait_for).wait_for(timeout=30_000)
    if then:
        tab.get_by_test_id(then).first.wait_for(timeout=30_000)
    tab.wait_for_function("!document.querySelector('[data-testid=\"stSkeleton\"]')", timeout=30_000)
    page_has_run(tab)
    counts = {
        "tables": tab.get_by_test_id("stDataFrame").count(),
        "headings": tab.get_by_test_id("stHeading").count(),
        "errors": tab.get_by_test_id("stAlertContentError").count(),
    }
    visitor.close()
    return counts


@pytest.mark.browser
@needs_chromium
@pytest.mark.parametrize("page", PAGES)
def test_beyond_loopback_without_a_data_root_each_page_refuses_in_a_real_browser(
    open_server, chromium, page
):
    counts = _visit(chromium, f"{open_server.url}/{page}?source=folder&folder=/", NO_ROOT)
    assert counts == {"tables": 0, "headings": 0, "errors": 1}  # the page never ran


@pytest.mark.browser
@needs_chromium
@pytest.mark.parametrize("how", ["direct", "dots", "symlink"])
def test_beyond_loopback_a_folder_outside_the_data_root_is_refused_in_a_real_browser(
    rooted_server, chromium, how
):
    server, root, outside = rooted_server
    typed = {
        "direct": str(outside),
        "dots": f"{root}/projects/../../outside",
        "symlink": str(root / "link"),
    }[how]
    sentence = f"{typed} is outside the data root this workbench may read, so it is refused."
    counts = _visit(chromium, f"{server.url}/?source=folder&folder={quote(typed)}", sentence)
    assert counts == {"tables": 0, "headings": 1, "errors": 1}


@pytest.mark.browser
@needs_chromium
def test_beyond_loopback_a_folder_inside_the_data_root_loads_in_a_real_browser(
    rooted_server, chromium
):
    server, root, _ = rooted_server
    url = f"{server.url}/?source=folder&folder={quote(str(root / 'projects'))}"
    counts = _visit(chromium, url, "1 of 1 sessions", then="stDataFrame")  # bad-choices.synthetic's
    assert counts["errors"] == 0
    assert counts["tables"] == 1


@pytest.mark.browser
@needs_chromium
def test_uploads_live_in_a_private_folder_until_the_browser_session_ends(tmp_path, chromium):
    """The server's temporary folder is this test's: an upload appears in a folder only this
    user can open, and is gone soon after the browser leaves."""
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    upload = SAMPLES / "transcripts" / "bad-choices.synthetic.jsonl"
    with streamlit_server(env={"TMPDIR": str(temporary)}) as server:
        visitor = chromium.new_context()
        tab = visitor.new_page()
        tab.goto(server.url)
        tab.get_by_text("Upload files").click()
        tab.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(upload))
        tab.get_by_text("1 of 1 sessions").wait_for(timeout=30_000)
        (private,) = temporary.glob("tsq-uploads-*")
        assert stat.S_IMODE(private.stat().st_mode) == 0o700
        saved = [p for p in private.glob("*/*") if not p.name.startswith(".index.duckdb")]
        assert [p.name for p in saved] == [upload.name]  # beside it, its index, hidden
        assert saved[0].read_bytes() == upload.read_bytes()
        visitor.close()  # the browser session ends
        deadline = time.monotonic() + 30
        while private.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not private.exists()
        assert server.process.poll() is None  # the server goes on


@pytest.mark.browser
@needs_chromium
def test_beyond_loopback_without_a_login_configured_no_page_runs_in_a_real_browser(
    tmp_path, chromium
):
    command = streamlit_command("--server.address", "0.0.0.0")
    with streamlit_server(command, env={"TSQ_DATA_ROOT": str(tmp_path)}) as server:
        counts = _visit(chromium, f"{server.url}/judge", "and nothing says how people log in")
    assert counts == {"tables": 0, "headings": 0, "errors": 1}  # the page never ran


@pytest.mark.browser
@needs_chromium
def test_beyond_loopback_a_visitors_endpoint_never_receives_the_servers_key(
    tmp_path, screenshots, chromium
):
    """Served for real with the operator's key in its environment: the Judge page has no
    field for an endpoint, and a spec a visitor uploads that names one is refused before any
    request reaches it."""
    from playwright.sync_api import expect
    from test_served import OPERATOR_KEY, Attacker, spec_file

    root, _ = data_root_workspace(tmp_path)
    command = streamlit_command("--server.address", "0.0.0.0")
    env = {"TSQ_DATA_ROOT": str(root), "TSQ_AUTH": "none", "ANTHROPIC_API_KEY": OPERATOR_KEY}
    with Attacker() as attacker, streamlit_server(command, env=env) as server:
        upload = tmp_path / "judge.toml"
        upload.write_bytes(spec_file(attacker.url))
        visitor = chromium.new_context(viewport={"width": 1400, "height": 900})
        tab = visitor.new_page()
        projects = quote(str(root / "projects"))
        tab.goto(f"{server.url}/judge?source=folder&folder={projects}&session={BAD}")
        tab.get_by_text("Judge model").first.wait_for(timeout=30_000)
        tab.get_by_text("Anyone who reaches this workbench can use it").wait_for()
        tab.get_by_text("Judge: tsq-rubric/3#").wait_for(timeout=30_000)
        assert tab.get_by_text("Base URL (optional)").count() == 0
        tab.screenshot(path=str(screenshots / "1-judge-page-served.png"), full_page=True)
        assert tab.get_by_text("Endpoint", exact=True).count() == 1  # a choice, not a field
        tab.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(upload))
        tab.get_by_text("is not one this workbench's operator allows").wait_for(timeout=30_000)
        # the page's rerun may still show the button from before the upload for a moment
        expect(tab.get_by_text("Run the judge")).to_have_count(0, timeout=30_000)
        tab.screenshot(path=str(screenshots / "2-spec-refused.png"), full_page=True)
        visitor.close()
    assert attacker.requests == []


@pytest.mark.browser
@pytest.mark.slow
@needs_chromium
def test_served_uploads_stay_with_their_visitor_and_within_the_operators_limits(tmp_path, chromium):
    """Two visitors upload at once: each sees the sessions of its own upload only; more files
    than the operator allows are refused in one sentence and nothing of them is loaded."""
    root = tmp_path / "root"
    root.mkdir()
    env = {
        "TSQ_SERVED": "1",
        "TSQ_DATA_ROOT": str(root),
        "TSQ_AUTH": "none",
        "TSQ_MAX_UPLOAD_FILES": "1",
    }
    mine = SAMPLES / "transcripts" / "bad-choices.synthetic.jsonl"
    theirs = SAMPLES / "transcripts" / "embedded-subagent.synthetic.jsonl"
    with streamlit_server(env=env) as server:
        visitors = [chromium.new_context() for _ in range(2)]
        tabs = [visitor.new_page() for visitor in visitors]
        for tab, upload in zip(tabs, (mine, theirs), strict=True):
            tab.goto(server.url)
            tab.get_by_text("Upload files").click()
            tab.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(upload))
        for tab in tabs:
            tab.get_by_text("1 of 1 sessions").wait_for(timeout=30_000)
        shown = []
        for tab in tabs:  # a tab in front draws its table's cells
            tab.bring_to_front()
            tab.locator("[role=gridcell]").first.wait_for(state="attached", timeout=30_000)
            shown.append(" ".join(tab.locator("[role=gridcell]").all_inner_texts()))
        first, second = shown
        assert "Show me the contents of src/server.py" in first
        assert "currency API" not in first
        assert "currency API" in second
        assert "Show me the contents of src/server.py" not in second
        over = tabs[0]
        over.bring_to_front()
        over.get_by_test_id("stFileUploaderDropzoneInput").set_input_files([str(mine), str(theirs)])
        over.get_by_text("more than this workbench takes at once").wait_for(timeout=30_000)
        body = over.inner_text("body")
        for visitor in visitors:
            visitor.close()
    # the uploader keeps the first file beside the two added: three in all
    size = (2 * mine.stat().st_size + theirs.stat().st_size) / 1000
    assert f"3 files of {size:,.0f} kB in all are more than" in body
    assert "(at most 1 file and 200 MB), so none was loaded" in body
    assert "1 of 1 sessions" not in body


def test_upload_limits_come_from_the_operator_and_a_bad_one_turns_uploads_off():
    from analysis.ingest import UploadLimits

    assert UploadLimits.from_env({}) == UploadLimits(files=100, megabytes=200)
    limits = UploadLimits.from_env({"TSQ_MAX_UPLOAD_FILES": "2", "TSQ_MAX_UPLOAD_MB": "1.5"})
    assert limits.refusal([700_000, 800_000]) is None  # 1.5 MB in all: at the limit
    assert limits.refusal([700_000, 800_001]) == (
        "2 files of 1.5 MB in all are more than this workbench takes at once (at most 2 files "
        "and 1.5 MB), so none was loaded: upload fewer or smaller files."
    )
    assert limits.refusal([1, 1, 1]) is not None
    for bad in ({"TSQ_MAX_UPLOAD_FILES": "many"}, {"TSQ_MAX_UPLOAD_MB": "0"}):
        with pytest.raises(ValueError, match=r"must be positive numbers, so uploads are off\.$"):
            UploadLimits.from_env(bad)
