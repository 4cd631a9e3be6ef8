"""Local by default, in ``analysis``: which addresses are loopback, what serving beyond them
needs, and the data root every path from outside is confined to (links and ``..`` resolved),
for folders, studies, council configs, subagent files and uploads."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import pytest
from conftest import RICH, data_root_workspace

import analysis
from analysis.council import CouncilError, read_council_config
from analysis.ingest import (
    OutsideRoot,
    PrivateFolder,
    confine,
    inside_root,
    save_uploads,
    upload_name,
)
from analysis.study import LabelError

SAMPLES = analysis.sample_data_dir()
BAD_FILE = SAMPLES / "transcripts" / "bad-choices.synthetic.jsonl"
OUTSIDE = "leads outside the data root; not read"


@pytest.mark.parametrize(
    ("address", "loopback"),
    [
        ("localhost", True),
        ("LOCALHOST", True),
        ("127.0.0.1", True),
        ("127.3.4.5", True),
        ("::1", True),
        ("[::1]", True),
        ("unix:///run/tsq.sock", True),
        (None, False),  # unset: Streamlit listens on every interface
        ("", False),
        ("0.0.0.0", False),
        ("::", False),
        ("192.0.2.2", False),
        ("fd00::2", False),
        ("workbench.example", False),
        ("localhost.example", False),
    ],
)
def test_only_loopback_addresses_are_local(address, loopback):
    assert analysis.is_loopback(address) is loopback


def refusal_of(address: str | None, root: str | None, **settings: str | bool) -> str | None:
    return analysis.Serving(address, root, **settings).refusal()  # type: ignore[arg-type]


def test_serving_beyond_loopback_needs_a_data_root_said_in_one_sentence(tmp_path):
    assert refusal_of("localhost", None) is None
    assert refusal_of("0.0.0.0", str(tmp_path), auth="none") is None
    refusal = refusal_of("0.0.0.0", None)
    assert refusal == (
        "This workbench listens at 0.0.0.0, beyond this machine, and has no data root, so its "
        "pages are off: set TSQ_DATA_ROOT (or data_root in .streamlit/secrets.toml) to the "
        "folder it may read, or serve it on localhost."
    )
    unset = refusal_of(None, None)
    assert unset is not None
    assert unset.startswith("This workbench listens on every network interface, beyond")
    missing = refusal_of("0.0.0.0", str(tmp_path / "nowhere"))
    assert missing is not None
    assert f"its data root {tmp_path / 'nowhere'} is not a folder" in missing
    for sentence in (refusal, unset, missing):
        assert sentence.count(". ") == 0
        assert "\n" not in sentence


NO_LOGIN = (
    "and nothing says how people log in, so its pages are off: give .streamlit/secrets.toml "
    "an [auth] section (Streamlit's login), or set TSQ_AUTH=proxy when an authenticating "
    "proxy is in front, or TSQ_AUTH=none to let anyone who reaches it in."
)


@pytest.mark.parametrize(
    ("settings", "refused"),
    [
        ({}, "This workbench listens at 0.0.0.0, beyond this machine, " + NO_LOGIN),
        ({"auth": "none"}, None),
        (
            {"auth": " Proxy "},
            "TSQ_AUTH=proxy says an authenticating proxy is in front, but this workbench listens "
            "at 0.0.0.0, beyond this machine, where anyone reaches it without the proxy, so its "
            "pages are off: listen on localhost (or a Unix socket) behind the proxy.",
        ),
        ({"login_configured": True}, None),
        ({"auth": "login", "login_configured": True}, None),
        ({"auth": "none", "login_configured": True}, None),
        (
            {"auth": "login"},
            "TSQ_AUTH=login needs an [auth] section in .streamlit/secrets.toml (Streamlit's "
            "login), so the pages of this workbench are off.",
        ),
        (
            {"auth": "nobody"},
            "TSQ_AUTH=nobody is not one of login, proxy or none, so the pages of this "
            "workbench are off.",
        ),
    ],
)
def test_served_the_pages_run_only_once_the_operator_says_how_people_log_in(
    tmp_path, settings, refused
):
    assert refusal_of("0.0.0.0", str(tmp_path), **settings) == refused


def test_a_proxy_in_front_of_loopback_is_served_too(tmp_path):
    assert not analysis.Serving("localhost").served
    assert not analysis.Serving("localhost", served_flag="0").served
    for flag in ("1", "true", "YES"):
        assert analysis.Serving("127.0.0.1", served_flag=flag).served
    behind = refusal_of("localhost", str(tmp_path), served_flag="1")
    assert behind == "This workbench is shared through a proxy (TSQ_SERVED), " + NO_LOGIN
    assert refusal_of("localhost", None, served_flag="1") == (
        "This workbench is shared through a proxy (TSQ_SERVED), and has no data root, so its "
        "pages are off: set TSQ_DATA_ROOT (or data_root in .streamlit/secrets.toml) to the "
        "folder it may read."
    )
    assert refusal_of("localhost", str(tmp_path), served_flag="1", auth="proxy") is None
    assert refusal_of("localhost", str(tmp_path), served_flag="on", auth="none") == (
        "TSQ_SERVED=on is not 1 or 0, so the pages of this workbench are off."
    )
    assert analysis.Serving("localhost", served_flag="maybe").served  # the safe side
    socket = "unix:///run/tsq.sock"
    assert analysis.Serving(socket).served  # only a proxy in front reaches a socket
    assert refusal_of(socket, str(tmp_path)) == (
        f"This workbench listens at {socket}, which only a proxy in front reaches, " + NO_LOGIN
    )
    assert refusal_of(socket, str(tmp_path), auth="proxy") is None
    assert analysis.Serving("localhost", str(tmp_path), "1", "none").anonymous
    assert not analysis.Serving("localhost", str(tmp_path), None, "none").anonymous  # local


@pytest.fixture
def rooted(tmp_path: Path) -> tuple[Path, Path]:
    """A data root holding one transcript, and a folder outside it holding another
    (``secret.jsonl``); inside the root, ``link`` points to the outside folder."""
    root, outside = data_root_workspace(tmp_path)
    (outside / "embedded-subagent.synthetic.jsonl").rename(outside / "secret.jsonl")
    return root, outside


def test_confine_refuses_a_path_outside_direct_dotted_or_linked(rooted):
    root, outside = rooted
    assert confine(root / "projects", root) == (root / "projects", root)
    assert confine("projects", root) == (root / "projects", root)  # relative: from the root
    assert confine(outside, None) == (outside, None)  # no root: anything
    for typed in (str(outside), f"{root}/projects/../../outside", str(root / "link"), "../outside"):
        with pytest.raises(OutsideRoot) as refused:
            confine(typed, root)
        assert str(refused.value) == (
            f"{typed} is outside the data root this workbench may read, so it is refused."
        )
    assert confine(BAD_FILE, root, also=(SAMPLES,)) == (BAD_FILE, SAMPLES)  # the bundled samples


def test_inside_root_resolves_home_and_names_alike(rooted, monkeypatch):
    root, _ = rooted
    monkeypatch.setenv("HOME", str(root))
    assert inside_root("~/projects", root)
    assert not inside_root(str(root) + "-sibling", root)


def test_the_loader_reads_nothing_outside_its_root(rooted):
    root, outside = rooted
    (root / "projects" / "linked.jsonl").symlink_to(outside / "secret.jsonl")
    loaded = analysis.load([root], root=root)
    assert [s.source for s in loaded.sessions] == [str(root / "projects" / BAD_FILE.name)]
    issues = {(issue.file, issue.reason) for issue in loaded.issues}
    assert issues == {(str(root / "projects" / "linked.jsonl"), OUTSIDE)}
    # a given path outside: an issue, nothing read
    elsewhere = analysis.load([outside, root / "link" / "secret.jsonl"], root=root)
    assert elsewhere.sessions == []
    assert {issue.reason for issue in elsewhere.issues} == {OUTSIDE}
    assert elsewhere.files_read == 0
    # without a root, the links are followed as before
    assert len(analysis.load([root]).sessions) == 2


def test_a_subagent_file_that_links_outside_is_not_read(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    shutil.copytree(SAMPLES / "transcripts" / RICH, outside / RICH)
    root.mkdir()
    shutil.copy(SAMPLES / "transcripts" / f"{RICH}.jsonl", root)
    (root / RICH).symlink_to(outside / RICH, target_is_directory=True)
    whole = analysis.load([root])
    confined = analysis.load([root], root=root)
    assert whole.files_read == 2
    assert confined.files_read == 1
    (issue,) = [i for i in confined.all_issues() if i.reason == OUTSIDE]
    assert issue.file.endswith("subagents/agent-a5eed02.jsonl")


def test_a_study_outside_the_root_or_linking_out_is_refused(rooted):
    root, outside = rooted
    study = root / "study"
    shutil.copytree(SAMPLES / "council_vs_human", study)
    with pytest.raises(LabelError, match="is outside the data root this workbench may read"):
        analysis.load_study(SAMPLES / "council_vs_human", data_root=root)
    shutil.copy(study / "items.csv", outside / "more.csv")
    (study / "more.csv").symlink_to(outside / "more.csv")
    loaded = analysis.load_study(study, data_root=root)
    assert (str(study / "more.csv"), OUTSIDE) in {(i.file, i.reason) for i in loaded.issues}
    assert len(loaded.sessions) == len(analysis.load_study(study).sessions)


def test_a_council_config_and_its_labels_stay_inside_the_root(rooted):
    root, outside = rooted
    inside = root / "council.toml"
    text = (SAMPLES / "council.example.toml").read_text()
    inside.write_text(text)
    assert read_council_config(inside, root).chairman.model
    with pytest.raises(CouncilError, match="is outside the data root"):
        read_council_config(SAMPLES / "council.example.toml", root)
    shutil.copy(SAMPLES / "council_vs_human" / "labels.toml", outside / "labels.toml")
    members = '[[stage1]]\nmodel = "gpt-4o"\n[chairman]\nmodel = "claude-opus-4-1"\n'
    inside.write_text(f'labels = "../outside/labels.toml"\n{members}')
    assert read_council_config(inside).fields  # without a root, read as before
    with pytest.raises(CouncilError) as refused:
        read_council_config(inside, root)
    assert str(refused.value) == (
        f"{inside}: its labels config {root}/../outside/labels.toml is outside the data root "
        "this workbench may read, so it is refused."
    )


@pytest.mark.parametrize(
    ("name", "safe"),
    [
        ("session.jsonl", "session.jsonl"),
        ("../../etc/passwd.jsonl", "passwd.jsonl"),
        ("..\\..\\evil.jsonl", "evil.jsonl"),
        ("..", "upload"),
        ("", "upload"),
        (".hidden.jsonl", "hidden.jsonl"),  # the loader skips dot files
        ("a/b/.", "upload"),
        ("x<y>|z.json", "x_y_z.json"),
        ("é" * 300 + ".jsonl", "_" + ".jsonl"),
        ("n" * 300 + ".jsonl", "n" * 114 + ".jsonl"),
    ],
)
def test_an_upload_name_cannot_leave_its_folder(name, safe):
    assert upload_name(name) == safe


def test_uploads_are_saved_privately_and_removed(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    folder = PrivateFolder(prefix="tsq-uploads-")
    assert folder.path.parent == tmp_path
    assert stat.S_IMODE(folder.path.stat().st_mode) == 0o700
    data = BAD_FILE.read_bytes()
    files = [("../../x.jsonl", data), ("x.jsonl", data), ("..", b"{}")]
    saved = save_uploads(folder.path, files)
    assert saved.parent == folder.path
    assert stat.S_IMODE(saved.stat().st_mode) == 0o700
    assert sorted(p.name for p in saved.iterdir()) == ["upload", "x-2.jsonl", "x.jsonl"]
    assert save_uploads(folder.path, files) == saved  # the same uploads: the same folder
    assert len(analysis.load([saved]).sessions) == 2
    assert list(tmp_path.iterdir()) == [folder.path]  # nothing written beside it
    folder.remove()
    assert not folder.path.exists()
    folder.remove()  # once is enough


def test_a_private_folder_goes_when_nothing_holds_it(tmp_path, monkeypatch):
    import gc

    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    path = PrivateFolder().path
    gc.collect()
    assert not path.exists()
