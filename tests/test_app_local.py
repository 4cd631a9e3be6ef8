"""Local by default, in the app (Streamlit AppTest): beyond loopback no page runs without a
data root; with one, every path a visitor gives (a folder typed or linked, labels, a council
config) stays inside it; uploads go to the session's private folder under safe names."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import pytest
from conftest import (
    BAD,
    data_root_workspace,
    open_app as app,
    open_page as page,
    plain,
    server_address,
    use_folder,
)

import analysis

SAMPLES = analysis.sample_data_dir()
PAGES = [
    "pages/overview.py",
    "pages/session.py",
    "pages/turn.py",
    "pages/catalog.py",
    "pages/judge.py",
    "pages/agreement.py",
    "pages/adjudicate.py",
]
NO_ROOT = (
    "This workbench listens at 0.0.0.0, beyond this machine, and has no data root, so its "
    "pages are off: set TSQ_DATA_ROOT (or data_root in .streamlit/secrets.toml) to the folder "
    "it may read, or serve it on localhost."
)

pytestmark = pytest.mark.usefixtures("fresh_app")


def refused(typed: str | Path) -> str:
    return f"{typed} is outside the data root this workbench may read, so it is refused."


@pytest.fixture
def rooted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """``TSQ_DATA_ROOT`` holding one transcript (``projects``) and ``link``, a symlink to a
    folder outside it that holds another."""
    root, outside = data_root_workspace(tmp_path)
    monkeypatch.setenv("TSQ_DATA_ROOT", str(root))
    return root, outside


@pytest.mark.parametrize("path", PAGES)
def test_beyond_loopback_without_a_data_root_no_page_runs(path):
    with server_address("0.0.0.0"):
        at = page(path, source="folder", folder="/")
    assert not at.exception
    assert [plain(e.value) for e in at.error] == [NO_ROOT]
    assert not at.title  # the page itself never ran
    assert not at.dataframe
    assert not at.sidebar.radio  # no data source is offered


def test_unset_the_address_is_every_interface_and_refused_too():
    with server_address(None):
        at = app()
    (error,) = at.error
    assert plain(error.value).startswith("This workbench listens on every network interface")
    assert not at.dataframe


def test_beyond_loopback_with_a_data_root_the_pages_run(rooted, monkeypatch):
    root, _ = rooted
    monkeypatch.setenv("TSQ_AUTH", "none")
    with server_address("0.0.0.0"):
        at = page("pages/overview.py", source="folder", folder=str(root / "projects"))
    assert not at.exception
    assert not at.error
    assert at.dataframe[0].value["session_id"].tolist() == [BAD]


def test_a_data_root_in_the_secrets_counts_too(tmp_path, monkeypatch):
    from conftest import APP

    monkeypatch.setenv("TSQ_AUTH", "none")
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=60)
    at.secrets["data_root"] = str(tmp_path)
    with server_address("0.0.0.0"):
        at.run()
    assert not at.error
    assert at.title[0].value == "Sessions"


@pytest.mark.parametrize("how", ["direct", "dots", "symlink", "relative dots", "symlink dots"])
@pytest.mark.parametrize("given", ["linked", "typed"])
def test_a_folder_outside_the_data_root_is_refused(rooted, how, given):
    root, outside = rooted
    typed = {
        "direct": str(outside),
        "dots": f"{root}/projects/../../outside",
        "symlink": str(root / "link"),
        "relative dots": "../outside",
        "symlink dots": f"{root}/link/../outside",  # the link is followed before ..
    }[how]
    if given == "linked":
        at = page("pages/overview.py", source="folder", folder=typed)
    else:
        at = use_folder(app(), typed)
    assert not at.exception
    assert [plain(e.value) for e in at.error] == [refused(typed)]
    assert not at.dataframe
    assert not at.expander  # nothing was read from it, not even its parse issues


def test_a_folder_inside_the_data_root_loads_and_a_relative_one_starts_there(rooted):
    root, _ = rooted
    for typed in (str(root / "projects"), "projects", f"{root}/projects/../projects"):
        at = page("pages/overview.py", source="folder", folder=typed)
        assert not at.exception
        assert not at.error
        assert at.dataframe[0].value["session_id"].tolist() == [BAD]


def test_a_link_inside_the_data_root_to_a_file_outside_is_not_read(rooted):
    root, outside = rooted
    (root / "projects" / "peek.jsonl").symlink_to(outside / "embedded-subagent.synthetic.jsonl")
    at = page("pages/overview.py", source="folder", folder=str(root))
    assert not at.exception
    assert at.dataframe[-1].value["session_id"].tolist() == [BAD]  # after the issues' table
    issues = at.expander[0]
    assert issues.label == "1 parse issue"
    (issue,) = issues.dataframe[0].value.to_dict("records")
    assert issue["reason"] == "leads outside the data root; not read"
    assert (issue["count"], issue["lines"]) == (1, "")  # an issue of the whole file


def test_the_other_pages_see_no_judgments_of_a_folder_outside_the_root(rooted):
    _, outside = rooted
    shutil.copytree(SAMPLES / "judgments", outside / "judgments")
    at = page(
        "pages/agreement.py",
        state={"kept_data_source": "Local folder", "kept_data_folder": str(outside)},
    )
    assert not at.exception
    assert "TSQ judge vs people" not in [h.value for h in at.header]


@pytest.mark.parametrize("path", ["pages/agreement.py", "pages/adjudicate.py"])
def test_labels_outside_the_data_root_are_refused(rooted, path):
    root, outside = rooted
    shutil.copytree(SAMPLES / "council_vs_human", outside / "study")
    typed = f"{root}/link/study"
    at = page(path, state={"kept_study_path": typed})
    assert not at.exception
    assert [plain(e.value) for e in at.error] == [refused(typed)]
    assert not at.dataframe
    assert not at.metric


def test_labels_inside_the_data_root_or_the_bundled_study_load(rooted):
    root, _ = rooted
    shutil.copytree(SAMPLES / "council_vs_human", root / "study")
    for state in ({"kept_study_path": "study"}, None):  # relative to the root; the default
        at = page("pages/agreement.py", state=state)
        assert not at.exception
        assert not at.error
        assert {m.label: m.value for m in at.metric}["Sessions"] == "450"


def test_a_council_config_outside_the_data_root_is_refused(rooted):
    root, outside = rooted
    shutil.copy(SAMPLES / "council.example.toml", outside / "council.toml")
    at = page("pages/judge.py")
    assert not at.exception
    assert not at.error  # the bundled example is allowed
    typed = str(root / "link" / "council.toml")
    at.text_input(key="council_config").set_value(typed).run()
    assert [plain(e.value) for e in at.error] == [refused(typed)]


def test_uploads_go_to_a_private_folder_under_safe_names(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    bad = (SAMPLES / "transcripts" / "bad-choices.synthetic.jsonl").read_bytes()
    other = (SAMPLES / "transcripts" / "embedded-subagent.synthetic.jsonl").read_bytes()
    at = app()
    at.sidebar.radio(key="data_source").set_value("Upload files").run()
    at.sidebar.file_uploader(key="data_uploads").set_value(
        [("../../../escape.jsonl", bad, "application/json"), ("..\\x.jsonl", other, "text/plain")]
    ).run()
    assert not at.exception
    assert not at.expander  # no parse issue
    assert len(at.dataframe[0].value) == 2
    assert BAD in at.dataframe[0].value["session_id"].tolist()
    (private,) = tmp_path.iterdir()  # nothing written anywhere else
    assert private.name.startswith("tsq-uploads-")
    assert stat.S_IMODE(private.stat().st_mode) == 0o700
    (saved,) = private.iterdir()
    transcripts = [p.name for p in saved.iterdir() if not p.name.startswith(".index.duckdb")]
    assert sorted(transcripts) == ["escape.jsonl", "x.jsonl"]  # and their index, hidden
    assert not (tmp_path.parent / "escape.jsonl").exists()


def test_with_oidc_login_configured_a_visitor_logs_in_first():
    from conftest import APP
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=60)
    at.secrets["auth"] = {"redirect_uri": "http://localhost:8501/oauth2callback"}
    at.run()
    assert not at.exception
    assert [i.value for i in at.info] == ["Log in to open the workbench."]
    assert [b.label for b in at.button] == ["Log in"]
    assert not at.title
    assert not at.dataframe
