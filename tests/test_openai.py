"""OpenAI chat-format trajectories and the catalogs given beside them."""

from __future__ import annotations

import json

import analysis

TOOLS = [
    {
        "type": "function",
        "function": {"name": "lookup", "description": "Look up.", "parameters": {"type": "object"}},
    },
    {
        "name": "cancel",
        "description": "Cancel.",
        "input_schema": {"type": "object", "properties": {}},
    },
]


def _trajectory(task_id, calls_arguments='{"id": "7"}'):
    return {
        "task_id": task_id,
        "trial": 1,
        "reward": 0.0,
        "traj": [
            {"role": "system", "content": "policy"},
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": "Checking.",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "lookup", "arguments": calls_arguments},
                    },
                    {
                        "id": "c2",
                        "type": "function",
                        "function": {"name": "cancel", "arguments": "{}"},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "name": "lookup", "content": "found"},
            {"role": "tool", "tool_call_id": "c2", "name": "cancel", "content": "ok"},
            {"role": "user", "content": "thanks"},
            {"role": "assistant", "content": "Bye."},
        ],
    }


def test_trajectories_become_sessions_with_the_catalog_beside_them(tmp_path):
    (tmp_path / "runs.json").write_text(json.dumps([_trajectory(0), _trajectory(1)], indent=2))
    (tmp_path / "tools.json").write_text(json.dumps(TOOLS))
    loaded = analysis.load([tmp_path])
    assert [s.session_id for s in loaded.sessions] == ["runs/task0-trial1", "runs/task1-trial1"]
    session = loaded.sessions[0]
    assert session.format == "openai"
    assert session.system_prompt == "policy"
    assert session.metadata == {"task_id": 0, "trial": 1, "reward": 0.0}
    assert [t.ask for t in session.turns] == ["hi", "thanks"]
    message = session.turns[0].messages[0]
    assert message.text == "Checking."
    assert [(c.name, c.input, c.result.content) for c in message.tool_calls] == [
        ("lookup", {"id": "7"}, "found"),
        ("cancel", {}, "ok"),
    ]
    catalog = session.catalog_for(session.turns[1])
    assert catalog is not None
    assert catalog.names() == ["lookup", "cancel"]
    assert catalog.get("cancel").parameters == {"type": "object", "properties": {}}
    assert catalog.tools[0].provenance == "trace"


def test_explicit_catalog_wins_and_jsonl_trajectories_load(tmp_path):
    lines = "\n".join(json.dumps(_trajectory(i)) for i in range(3)) + "\n"
    (tmp_path / "runs.jsonl").write_text(lines)
    catalog = tmp_path / "elsewhere.json"
    catalog.write_text(json.dumps({"tools": TOOLS[:1]}))
    loaded = analysis.load([tmp_path / "runs.jsonl"], catalog=catalog)
    assert len(loaded.sessions) == 3
    assert all(s.catalog_for(s.turns[0]).names() == ["lookup"] for s in loaded.sessions)


def test_invalid_arguments_are_an_issue_and_the_call_is_kept(tmp_path):
    (tmp_path / "runs.json").write_text(json.dumps([_trajectory(0, calls_arguments="{not json")]))
    (session,) = analysis.load([tmp_path / "runs.json"]).sessions
    call = next(session.tool_calls())
    assert call.input == {"_raw": "{not json"}
    (issue,) = session.issues
    assert "not valid JSON" in issue.reason
    assert issue.line == 1


def test_truncated_array_keeps_every_complete_trajectory(tmp_path):
    text = json.dumps([_trajectory(0), _trajectory(1), _trajectory(2)], indent=1)
    cut = text[: text.index('"task_id": 2') + 20]
    (tmp_path / "runs.json").write_text(cut)
    loaded = analysis.load([tmp_path / "runs.json"])
    assert [s.metadata["task_id"] for s in loaded.sessions] == [0, 1]
    (issue,) = loaded.issues
    assert issue.line == cut.count("\n") + 1  # where the text breaks off
    assert issue.reason.startswith("not valid JSON (Unterminated string")


def test_trajectories_without_an_id_are_named_by_file_stem_and_position(tmp_path):
    named = {"id": "conv-9", "messages": _trajectory(2)["traj"]}
    plain = [{"messages": _trajectory(n)["traj"]} for n in range(2)]
    (tmp_path / "mixed.jsonl").write_text(
        "\n".join(json.dumps(item) for item in [plain[0], named, plain[1]]) + "\n"
    )
    loaded = analysis.load([tmp_path / "mixed.jsonl"])
    assert [s.session_id for s in loaded.sessions] == ["mixed/0", "conv-9", "mixed/2"]
