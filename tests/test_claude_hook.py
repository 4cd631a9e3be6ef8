"""Claude Code's SessionStart hook, run as Claude Code runs it: JSON on stdin, a fake HOME
holding ``~/.claude``, a project folder, and a real corpus transcript."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from conftest import CORPUS

import analysis

SPOTTER = CORPUS / "claude-code" / "spotter" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
HEAVY = {"pydantic", "polars", "pandas", "click", "streamlit", "anthropic", "openai", "duckdb"}


@pytest.fixture
def claude_home(tmp_path: Path) -> dict[str, Path]:
    """A fake HOME with user settings and MCP servers, a project with its own, and the data
    folder the registry goes to."""
    if not SPOTTER.exists():
        pytest.skip("../shared/corpus is not beside this checkout")
    home, project, data = tmp_path / "home", tmp_path / "project", tmp_path / "data"
    (home / ".claude").mkdir(parents=True)
    (project / ".claude").mkdir(parents=True)
    (home / ".claude.json").write_text(
        json.dumps(
            {
                "mcpServers": {"memory": {"command": "mcp-memory"}},
                "projects": {str(project): {"mcpServers": {"postgres": {"command": "pg"}}}},
            }
        )
    )
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"github": {"url": "x"}}}))
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["WebFetch"]}})
    )
    (project / ".claude" / "settings.local.json").write_text(
        json.dumps({"permissions": {"allow": ["Bash(pytest:*)"], "deny": ["Bash(curl:*)"]}})
    )
    return {"home": home, "project": project, "data": data}


def run_hook(places: dict[str, Path], stdin: str) -> subprocess.CompletedProcess[str]:
    env = {"HOME": str(places["home"]), "TSQ_DATA_DIR": str(places["data"]), "PATH": "/usr/bin"}
    return subprocess.run(
        [sys.executable, "-m", "analysis.claude.hook"],
        input=stdin,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).parent.parent,
    )


def payload(session_id: str, transcript: Path, cwd: Path, source: str) -> str:
    return json.dumps(
        {
            "session_id": session_id,
            "transcript_path": str(transcript),
            "cwd": str(cwd),
            "hook_event_name": "SessionStart",
            "source": source,
        }
    )


def registry(places: dict[str, Path]) -> list[dict]:
    path = places["data"] / "claude-sessions.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_startup_is_recorded_with_its_menu_snapshot(claude_home):
    records = [json.loads(line) for line in SPOTTER.read_text().splitlines()[:50]]
    version = next(r["version"] for r in records if "version" in r)
    session = SPOTTER.stem
    done = run_hook(claude_home, payload(session, SPOTTER, claude_home["project"], "startup"))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    (entry,) = registry(claude_home)
    assert entry["session_id"] == session
    assert entry["transcript_path"] == str(SPOTTER)
    assert entry["cwd"] == str(claude_home["project"])
    assert entry["source"] == "startup"
    assert entry["claude_code_version"] == version
    assert entry["resumed_from"] is None
    snapshot = entry["menu_snapshot"]
    assert {(s["name"], s["scope"]) for s in snapshot["mcp_servers"]} == {
        ("memory", "user"),
        ("postgres", "local"),
        ("github", "project"),
    }
    assert snapshot["permissions"] == {
        "allow": ["Bash(pytest:*)"],
        "deny": ["WebFetch", "Bash(curl:*)"],
    }


def test_a_resume_names_the_session_it_resumed(claude_home, tmp_path):
    """A resumed session's transcript replays the old one under its old id first."""
    resumed = tmp_path / f"{uuid.uuid4()}.jsonl"
    shutil.copy(SPOTTER, resumed)
    done = run_hook(claude_home, payload(resumed.stem, resumed, claude_home["project"], "resume"))
    assert done.returncode == 0
    (entry,) = registry(claude_home)
    assert (entry["source"], entry["resumed_from"]) == ("resume", SPOTTER.stem)


def test_a_registered_session_is_judged_against_its_menu_snapshot(claude_home, monkeypatch):
    """The snapshot's MCP servers are on the menu (a server the session called keeps its
    observed tools, said to come from it), the whole-tool deny rule marks WebFetch
    unavailable and Bash(curl:*) takes nothing away."""
    monkeypatch.setenv("TSQ_DATA_DIR", str(claude_home["data"]))
    copy = claude_home["project"] / SPOTTER.name
    copy.write_text(SPOTTER.read_text().replace('"name":"Grep"', '"name":"mcp__github__search"'))
    started = run_hook(claude_home, payload(SPOTTER.stem, copy, claude_home["project"], "startup"))
    assert started.returncode == 0
    (session,) = analysis.load([copy]).sessions
    assert session.menu_snapshot is not None
    assert session.menu_snapshot.source == "startup"
    rendered = analysis.render_turn(session, session.turns[0], "full")
    menu = {tool.name: tool for tool in rendered.tools}
    assert rendered.catalog_basis == "version+snapshot+observed"
    assert "the menu snapshot of" in rendered.catalog_note
    assert {name for name, tool in menu.items() if tool.provenance == "snapshot"} == {
        "mcp__memory",
        "mcp__postgres",
    }
    called = menu["mcp__github__search"]
    assert called.provenance == "observed"
    assert called.description.endswith(
        f"from MCP server github, configured at session start ({copy.parent / '.mcp.json'})."
    )
    assert menu["WebFetch"].denied_by == "WebFetch"
    assert menu["WebFetch"].description.startswith("UNAVAILABLE in this session")
    assert menu["Bash"].denied_by is None

    monkeypatch.setenv("TSQ_DATA_DIR", str(claude_home["data"] / "elsewhere"))
    (unregistered,) = analysis.load([copy]).sessions
    plain = analysis.render_turn(unregistered, unregistered.turns[0], "full")
    assert (unregistered.menu_snapshot, plain.catalog_basis) == (None, "version+observed")


@pytest.mark.parametrize("stdin", ["not json", "[]", '{"cwd": "/tmp"}'])
def test_bad_input_never_fails_the_session_and_is_logged(claude_home, stdin):
    done = run_hook(claude_home, stdin)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert not (claude_home["data"] / "claude-sessions.jsonl").exists()
    (line,) = (claude_home["data"] / "hook-errors.log").read_text().splitlines()
    assert "Error" in line


def test_an_unwritable_registry_folder_still_exits_zero(claude_home):
    claude_home["data"].write_text("a file, not a folder")
    done = run_hook(claude_home, payload("s", SPOTTER, claude_home["project"], "startup"))
    assert (done.returncode, done.stderr) == (0, "")


def test_the_hook_imports_no_heavy_library():
    code = (
        "import sys, analysis.claude.hook; "
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {sorted(HEAVY)!r}))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def _tsq(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "analysis", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
        check=False,
    )


def _attributes(span) -> dict[str, str]:
    return {a.key: a.value.string_value for a in span.attributes}


@pytest.mark.slow
def test_install_hook_and_send_current_end_to_end(claude_home, tmp_path):
    """Install into a HOME whose settings already hold hooks; the hook records a startup and a
    resume; /tsq-send's live catalog (the example its command file gives) goes with the resumed
    session, sent to a receiver on loopback; uninstall leaves the user's hooks as they were."""
    from otlp_receiver import Receiver

    home, project = claude_home["home"], claude_home["project"]
    theirs = {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "mine.sh"}]}]}}
    theirs |= {"model": "opus"}
    (home / ".claude" / "settings.json").write_text(json.dumps(theirs))
    transcripts = home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(project))
    transcripts.mkdir(parents=True)
    first = transcripts / SPOTTER.name
    shutil.copy(SPOTTER, first)
    resumed = transcripts / f"{uuid.uuid4()}.jsonl"
    lines = SPOTTER.read_text().splitlines(keepends=True)
    # a resume replays the old history under the old id, then goes on under its own
    resumed.write_text(
        "".join(lines[:10] + [x.replace(SPOTTER.stem, resumed.stem) for x in lines[10:]])
    )
    env = {
        "HOME": str(home),
        "TSQ_DATA_DIR": str(claude_home["data"]),
        "PATH": f"{Path(sys.executable).parent}:/usr/bin",
    }

    done = _tsq("claude", "install", env=env, cwd=project)
    assert done.returncode == 0, done.stderr
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert settings["model"] == "opus"
    starts = settings["hooks"]["SessionStart"]
    assert starts[0] == theirs["hooks"]["SessionStart"][0]  # theirs first, untouched
    command = starts[1]["hooks"][0]["command"]
    assert command.endswith("-m analysis.claude.hook")
    command_file = home / ".claude" / "commands" / "tsq-send.md"
    assert f"{command_file}: written" in done.stdout
    again = _tsq("claude", "install", env=env, cwd=project)
    assert "already there" in again.stdout
    assert json.loads((home / ".claude" / "settings.json").read_text()) == settings

    for session, transcript, source in (
        (SPOTTER.stem, first, "startup"),
        (resumed.stem, resumed, "resume"),
    ):
        hook = subprocess.run(
            shlex.split(command),
            input=payload(session, transcript, project, source),
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert (hook.returncode, hook.stderr) == (0, "")
    entries = registry(claude_home)
    assert [e["source"] for e in entries] == ["startup", "resume"]
    assert entries[1]["resumed_from"] == SPOTTER.stem  # the thread: resume → the session before

    text = command_file.read_text()
    assert text.startswith("---\ndescription: ")
    example = json.loads(re.search(r"```json\n(.*?)\n```", text, re.DOTALL).group(1))
    live = tmp_path / "live.json"
    live.write_text(json.dumps(example))
    catalog, issues = analysis.catalog.load_live_dump(live)
    assert issues == []
    assert [tool.name for tool in catalog.tools] == [t["name"] for t in example["tools"]]

    with Receiver() as receiver:
        # /tsq-send's two commands, as its command file words them: a preview, then the yes
        options = ("--current", "--live-catalog", str(live), "--endpoint", receiver.url)
        preview = _tsq("send", "--preview", *options, env=env, cwd=project)
        assert preview.returncode == 0, preview.stderr
        assert f"Picked session {resumed.stem}" in preview.stderr
        assert "Not sent (a preview)." in preview.stdout
        assert receiver.behaviour.requests == []
        sent = _tsq("send", "--yes", *options, env=env, cwd=project)
        assert sent.returncode == 0, sent.stderr
        requests = receiver.behaviour.requests
    spans = [
        s for r in requests for rs in r.resource_spans for ss in rs.scope_spans for s in ss.spans
    ]
    chats = [_attributes(s) for s in spans if s.name.startswith("chat ")]
    assert chats
    menu = {d["name"]: d for d in json.loads(chats[-1]["gen_ai.tool.definitions"])}
    live_tools = {t["name"]: t for t in example["tools"]}
    github = "mcp__github__create_issue"
    assert menu[github]["description"] == live_tools[github]["description"]
    assert menu["Read"]["description"] != live_tools["Read"]["description"]  # the built-in wins
    assert "configured at session start" in menu["mcp__memory"]["description"]
    assert chats[-1]["tsq.catalog.basis"] == "version+live+snapshot"

    for way in ("--no-index", f"--index={tmp_path / 'index.duckdb'}"):  # both say one thread
        listed = _tsq("ingest", "--json", way, str(first), str(resumed), env=env, cwd=project)
        assert listed.returncode == 0, listed.stderr
        sessions = json.loads(listed.stdout)["sessions"]
        threads = {s["session_id"]: s["thread_id"] for s in sessions}
        assert threads == {SPOTTER.stem: SPOTTER.stem, resumed.stem: SPOTTER.stem}, way
    exported = tmp_path / "current.json"
    done = _tsq("export", "--current", "--out", str(exported), env=env, cwd=project)
    assert done.returncode == 0, done.stderr
    assert f"Picked session {resumed.stem}" in done.stderr
    assert json.loads(exported.read_text())["resourceSpans"]

    done = _tsq("claude", "uninstall", env=env, cwd=project)
    assert done.returncode == 0, done.stderr
    assert json.loads((home / ".claude" / "settings.json").read_text()) == theirs
    assert not command_file.exists()


def test_install_leaves_a_users_own_command_file_and_a_dry_run_writes_nothing(tmp_path):
    project = tmp_path / "project"
    mine = project / ".claude" / "commands" / "tsq-send.md"
    mine.parent.mkdir(parents=True)
    mine.write_text("my own command\n")
    env = {"HOME": str(tmp_path / "home"), "PATH": "/usr/bin"}
    dry = _tsq("claude", "install", "--project", str(project), "--dry-run", env=env, cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert "(dry run)" in dry.stdout
    assert not (project / ".claude" / "settings.json").exists()
    done = _tsq("claude", "install", "--project", str(project), env=env, cwd=tmp_path)
    assert f"{mine}: left as it is" in done.stdout
    assert mine.read_text() == "my own command\n"
    assert (project / ".claude" / "settings.json").exists()
    gone = _tsq("claude", "uninstall", "--project", str(project), env=env, cwd=tmp_path)
    assert mine.read_text() == "my own command\n"
    assert "SessionStart hook removed" in gone.stdout
    both = _tsq("claude", "install", "--user", "--project", str(project), env=env, cwd=tmp_path)
    assert both.returncode == 2
    assert "not both" in both.stderr


def test_send_current_without_any_session_is_one_sentence(tmp_path):
    env = {"HOME": str(tmp_path), "TSQ_DATA_DIR": str(tmp_path / "data"), "PATH": "/usr/bin"}
    done = _tsq(
        "send", "--current", "--endpoint", "http://127.0.0.1:9/v1/traces", env=env, cwd=tmp_path
    )
    assert done.returncode == 2
    assert done.stderr.startswith(f"no Claude Code session for {tmp_path}")
    assert len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr
