"""Nothing is loaded or counted twice: a file reached twice, resumed sessions, history written
again, and every file read (subagent files included) is counted.

Every expected number is counted here from the raw lines, never taken from the parser.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from conftest import SAMPLES, tsq
from records import assistant, result, text, tool_use, user

import analysis

SPOTTER_SESSION = "258c7280-ae70-4798-800f-63464d01a85d"
RESUMED_SESSION = "99999999-8888-4777-8666-555555555555"
REPLAYED_LINES = 1600  # past the Task call (line 1473) and the compaction (line 1256)


def raw_records(lines: list[str]) -> list[dict]:
    return [json.loads(line) for line in lines if line.strip()]


def main_chain_assistants(records: list[dict]) -> list[dict]:
    return [r for r in records if r.get("type") == "assistant" and not r.get("isSidechain")]


def tool_calling_response_ids(records: list[dict]) -> set[str]:
    return {
        r["message"]["id"]
        for r in main_chain_assistants(records)
        if any(block.get("type") == "tool_use" for block in r["message"]["content"])
    }


def tool_calls_by_name(records: list[dict]) -> Counter:
    """Names of the distinct tool_use ids of the main chain."""
    calls = {
        block["id"]: block["name"]
        for r in main_chain_assistants(records)
        for block in r["message"]["content"]
        if block.get("type") == "tool_use"
    }
    return Counter(calls.values())


def subagent_calls_by_name(records: list[dict], subagent_files: list[Path]) -> Counter:
    """Names of the distinct tool_use ids in subagent files and ``agent_progress`` copies."""
    messages = [r for file in subagent_files for r in raw_records(file.read_text().splitlines())]
    messages += [
        r["data"]["message"]
        for r in records
        if r.get("type") == "progress" and (r.get("data") or {}).get("type") == "agent_progress"
    ]
    calls = {
        block["id"]: block["name"]
        for m in messages
        if m.get("type") == "assistant"
        for block in m["message"]["content"]
        if block.get("type") == "tool_use"
    }
    return Counter(calls.values())


def typed_ask_uuids(records: list[dict]) -> list[str]:
    """The user records a person typed (these spotter lines hold no slash command)."""
    asks = []
    for r in records:
        if r.get("type") != "user" or r.get("isSidechain") or r.get("isMeta"):
            continue
        content = r["message"]["content"]
        if (
            isinstance(content, str)
            and not r.get("isCompactSummary")
            and not content.startswith(("<", "[Request interrupted"))
        ):
            asks.append(r["uuid"])
    return asks


def ingest_json(*paths: Path) -> dict:
    run = tsq("ingest", "--json", *map(str, paths))
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@pytest.fixture(scope="module")
def spotter(corpus: Path) -> Path:
    return corpus / "claude-code" / "spotter" / f"{SPOTTER_SESSION}.jsonl"


# -- a file given and also inside a given folder --------------------------------------------


def test_a_file_inside_a_given_folder_is_loaded_once():
    folder = SAMPLES / "transcripts"
    inside = folder / "bad-choices.synthetic.jsonl"
    main_files = [p for p in folder.rglob("*.jsonl") if p.parent.name != "subagents"]
    trajectories = json.loads((folder / "openai" / "retail.synthetic.json").read_text())
    loaded = analysis.load([inside, folder])
    ids = [session.session_id for session in loaded.sessions]
    assert len(ids) == len(set(ids)) == len(main_files) + len(trajectories) == 4
    sources = {session.session_id: session.source for session in loaded.sessions}
    assert sources["5eed0000-0000-4000-8000-000000000001"] == str(inside)  # the first name given
    transcript_files = [p for p in folder.rglob("*") if p.suffix in (".jsonl", ".json")]
    assert loaded.files_read == len(transcript_files) == 6  # the subagent file included


# -- every file read is counted -------------------------------------------------------------


def test_files_read_counts_subagent_files(corpus):
    folder = corpus / "claude-code" / "spotter"
    expected = len(list(folder.rglob("*.jsonl")))
    report = analysis.ingest_report(analysis.load([folder]))
    assert report.totals.files == expected == 6


def test_a_folder_named_like_a_subagent_file_is_not_read(write_jsonl):
    path = write_jsonl([user("u1", "go")], name="s.jsonl")
    (path.parent / "s" / "subagents" / "agent-x.jsonl").mkdir(parents=True)
    loaded = analysis.load([path])
    assert loaded.files_read == 1
    assert loaded.all_issues() == []


# -- resumed sessions -----------------------------------------------------------------------


def _fresh_records() -> list[dict]:
    """What the resumed session did after the replayed history: one new ask and a new call."""
    new = {"sessionId": RESUMED_SESSION}
    bash = tool_use("toolu_new_1", "Bash", command="mix test")
    records = [
        user("new-u1", "did the tests pass?", **new),
        assistant("new-a1", "msg_new_1", bash, parent="new-u1", **new),
        result("new-r1", "toolu_new_1", "0 failures", parent="new-a1", **new),
        assistant("new-a2", "msg_new_2", text("They pass."), parent="new-r1", **new),
    ]
    for record in records:  # the next morning, after the original session ended
        record["timestamp"] = "2026-02-12T09:00:00.000Z"
    return records


def _write_resumed(spotter: Path, folder: Path) -> tuple[Path, list[str]]:
    """A ``claude --resume`` file: the spotter history replayed under a new session id, then
    new records."""
    replayed = []
    for line in spotter.read_text().splitlines()[:REPLAYED_LINES]:
        record = json.loads(line)
        if "sessionId" in record:
            record["sessionId"] = RESUMED_SESSION
        replayed.append(json.dumps(record))
    lines = replayed + [json.dumps(record) for record in _fresh_records()]
    path = folder / f"{RESUMED_SESSION}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path, lines


@pytest.mark.slow
def test_a_resumed_session_counts_each_response_and_call_once(spotter, tmp_path):
    resumed, resumed_lines = _write_resumed(spotter, tmp_path)
    original = raw_records(spotter.read_text().splitlines())
    copy = raw_records(resumed_lines)
    both = original + copy
    replayed = main_chain_assistants(raw_records(resumed_lines[:REPLAYED_LINES]))
    replayed_responses = {r["message"]["id"] for r in replayed}
    subagent_files = sorted((spotter.with_suffix("") / "subagents").glob("agent-*.jsonl"))

    loaded = analysis.load([spotter, resumed])
    parsed_ids = [m.id for s in loaded.sessions for t in s.turns for m in t.messages]
    assert len(parsed_ids) == len(set(parsed_ids))
    calling = [m.id for s in loaded.sessions for t in s.turns for m in t.messages if m.tool_calls]
    assert sorted(calling) == sorted(tool_calling_response_ids(both))

    first, second = loaded.sessions
    assert first.issues == []
    assert second.session_id == RESUMED_SESSION
    (issue,) = second.issues
    assert issue.reason == (
        f"{len(replayed_responses)} model responses already loaded from {spotter} skipped "
        "(resumed session)"
    )
    # The replayed turn is dropped; the new ask is the resumed session's only turn.
    assert [t.ask for t in second.turns] == ["did the tests pass?"]
    assert [t.index for t in second.turns] == [0]

    totals = ingest_json(spotter, resumed)["totals"]
    assert totals["turns"] == len(set(typed_ask_uuids(both))) == 3
    # Whichever file is given first, the session that began first keeps the history.
    for order in ([spotter, resumed], [resumed, spotter]):
        by_id = {s.session_id: s for s in analysis.load(order).sessions}
        assert [t.ask for t in by_id[RESUMED_SESSION].turns] == ["did the tests pass?"], order
        assert by_id[first.session_id].issues == [], order
        totals = ingest_json(*order)["totals"]
        assert totals["tool_calls"] == dict(tool_calls_by_name(both)), order
        assert totals["subagent_tool_calls"] == dict(
            subagent_calls_by_name(both, subagent_files)
        ), order
        assert totals["files"] == 2 + len(subagent_files), order


def test_history_written_again_further_down_one_file_counts_once(spotter, tmp_path):
    lines = spotter.read_text().splitlines()
    again = []
    for number, line in enumerate(lines[:REPLAYED_LINES]):
        record = json.loads(line)
        if record.get("type") == "assistant":  # the same responses under new uuids
            record["uuid"] = f"rewritten-{number}"
        again.append(json.dumps(record))
    path = tmp_path / "rewritten.jsonl"
    path.write_text("\n".join(lines + again) + "\n")
    records = raw_records(lines)

    (session,) = analysis.load([path]).sessions
    messages = [m for t in session.turns for m in t.messages]
    main = main_chain_assistants(records)
    assert [m.id for m in messages] == list(dict.fromkeys(r["message"]["id"] for r in main))
    assert Counter(session.tool_call_counts()) == tool_calls_by_name(records)
    assert len(session.turns) == len(typed_ask_uuids(records)) == 2
    texts: dict[str, list[str]] = {}
    for r in main:
        for block in r["message"]["content"]:
            if block.get("type") == "text" and block["text"].strip():
                texts.setdefault(r["message"]["id"], []).append(block["text"].strip())
    assert {m.id: m.text for m in messages if m.text} == {
        key: "\n\n".join(parts) for key, parts in texts.items()
    }
    assert session.issues == []


def test_a_judgments_file_of_one_line_loads(tmp_path):
    line = {
        "session_id": "s",
        "turn_index": 0,
        "step_index": 2,
        "message_id": "msg_1",
        "score": 1.0,
        "votes": [{"verdict": "correct", "reasoning": "fine"}],
        "n_requested": 1,
        "n_valid": 1,
        "n_discarded": 0,
        "model": "m",
        "spec_name": "tsq-rubric/2",
        "condition": "full",
        "catalog_size": 10,
        "call_rendered": True,
        "context_chars": 0,
    }
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(line) + "\n")
    loaded = analysis.load([path])
    assert [(j.turn_index, j.step_index, j.message_id) for j in loaded.judgments] == [
        (0, 2, "msg_1")
    ]
    assert loaded.issues == []


def test_inside_root_resolves_links_and_dots(tmp_path):
    from analysis.ingest import inside_root

    root = tmp_path / "root"
    (root / "projects").mkdir(parents=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (root / "link").symlink_to(outside)
    assert inside_root(root, root)
    assert inside_root(root / "projects", root)
    assert inside_root(str(root / "projects" / "not-yet"), str(root))
    assert not inside_root(outside, root)
    assert not inside_root(root / "projects" / ".." / ".." / "elsewhere", root)
    assert not inside_root(root / "link", root)  # a link inside that points outside
    assert not inside_root(tmp_path / "root-sibling", root)  # a name that only starts alike
