"""Claude Code's SessionStart hook, run as Claude Code runs it: JSON on stdin, a fake HOME
holding ``~/.claude``, a project folder, and a real corpus transcript."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from conftest import CORPUS

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
