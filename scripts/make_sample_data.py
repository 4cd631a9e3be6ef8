"""Write the synthetic sample transcripts in ``sample_data/transcripts/``.

They follow Claude Code 2.1.x's on-disk format (one content block per line, ``progress`` and
``file-history-snapshot`` records, ``subagents/`` files) and tau-bench's OpenAI chat format.
Deterministic: running it again rewrites the same bytes.

    python scripts/make_sample_data.py
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1] / "sample_data" / "transcripts"
START = datetime(2026, 3, 2, 9, 0, 0)
CWD = "/home/dev/projects/shop-api"
VERSION = "2.1.39"
MODEL = "claude-opus-4-6"


class Transcript:
    """Emits records the way Claude Code writes them, with a parent chain and a clock."""

    def __init__(
        self, session_id: str, *, agent_id: str | None = None, version: str | None = VERSION
    ) -> None:
        self.session_id = session_id
        self.agent_id = agent_id
        self.version = version
        self.records: list[dict[str, Any]] = []
        self.parent: str | None = None
        self.clock = START
        self.counter = 0

    def _id(self, prefix: str) -> str:
        self.counter += 1
        seed = f"{self.session_id}/{self.agent_id}/{prefix}/{self.counter}"
        return str(uuid.uuid5(uuid.NAMESPACE_URL, seed))

    def _tick(self, seconds: float = 2.0) -> str:
        self.clock += timedelta(seconds=seconds)
        return self.clock.isoformat(timespec="milliseconds") + "Z"

    def _base(self, kind: str) -> dict[str, Any]:
        record: dict[str, Any] = {
            "parentUuid": self.parent,
            "isSidechain": self.agent_id is not None,
            "userType": "external",
            "cwd": CWD,
            "sessionId": self.session_id,
        }
        if self.version:
            record["version"] = self.version
        record["gitBranch"] = "main"
        if self.agent_id:
            record["agentId"] = self.agent_id
        record["type"] = kind
        return record

    def _append(self, record: dict[str, Any]) -> str:
        record_id = self._id("uuid")
        record["uuid"] = record_id
        record["timestamp"] = self._tick()
        self.records.append(record)
        self.parent = record_id
        return record_id

    def snapshot(self) -> None:
        message_id = self._id("snapshot")
        self.records.append(
            {
                "type": "file-history-snapshot",
                "messageId": message_id,
                "snapshot": {
                    "messageId": message_id,
                    "trackedFileBackups": {},
                    "timestamp": self._tick(0),
                },
                "isSnapshotUpdate": False,
            }
        )

    def user(self, content: Any, **extra: Any) -> str:
        record = self._base("user")
        record["message"] = {"role": "user", "content": content}
        record.update(extra)
        return self._append(record)

    def assistant(self, *blocks: dict[str, Any], output_tokens: int = 40) -> list[str]:
        """One model response, written one content block per line as 2.1.x does."""
        message_id = "msg_" + self._id("msg").replace("-", "")[:24]
        ids = []
        for position, block in enumerate(blocks):
            record = self._base("assistant")
            last = position == len(blocks) - 1
            record["message"] = {
                "model": MODEL,
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "content": [block],
                "stop_reason": ("tool_use" if block["type"] == "tool_use" else "end_turn")
                if last
                else None,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": 12,
                    "cache_creation_input_tokens": 900,
                    "cache_read_input_tokens": 14000,
                    "output_tokens": output_tokens if last else 1,
                },
            }
            record["requestId"] = "req_" + message_id[4:]
            ids.append(self._append(record))
        return ids

    def result(
        self, call_id: str, content: Any, *, is_error: bool = False, extra: Any = None
    ) -> None:
        block = {"tool_use_id": call_id, "type": "tool_result", "content": content}
        if is_error:
            block["is_error"] = True
        record_extra = {"toolUseResult": extra} if extra is not None else {}
        self.user([block], **record_extra)

    def hook_progress(self, call_id: str, tool: str) -> None:
        record = self._base("progress")
        record["data"] = {
            "type": "hook_progress",
            "hookEvent": "PostToolUse",
            "hookName": f"PostToolUse:{tool}",
            "command": "./hooks/format.sh",
        }
        record["parentToolUseID"] = call_id
        record["toolUseID"] = call_id
        record["uuid"] = self._id("progress")
        record["timestamp"] = self._tick(0.1)
        self.records.append(record)

    def system(self, subtype: str, content: str, **extra: Any) -> None:
        record = self._base("system")
        record["subtype"] = subtype
        record["content"] = content
        record["level"] = "info"
        record.update(extra)
        self._append(record)

    def queue(self, content: str) -> None:
        self.records.append(
            {
                "type": "queue-operation",
                "operation": "enqueue",
                "timestamp": self._tick(0.5),
                "sessionId": self.session_id,
                "content": content,
            }
        )

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = (
            json.dumps(record, separators=(",", ":"), ensure_ascii=False) for record in self.records
        )
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def tool_use(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def bad_choices() -> Transcript:
    """The seed's fixture: one good tool choice and three howlers. Like the seed's records, it
    names no Claude Code version, so it is judged against the curated baseline."""
    t = Transcript("5eed0000-0000-4000-8000-000000000001", version=None)
    t.snapshot()
    t.user("Show me the contents of src/server.py")
    t.assistant(
        text("I'll read that file."), tool_use("toolu_g1", "Read", file_path="src/server.py")
    )
    t.hook_progress("toolu_g1", "Read")
    t.result("toolu_g1", "     1\u2192from flask import Flask\n     2\u2192app = Flask(__name__)\n")
    t.assistant(text("`src/server.py` creates a Flask app instance and nothing else yet."))
    t.user("What git branch is THIS repo currently on?")
    t.assistant(
        text("Let me look that up online."),
        tool_use("toolu_w1", "WebSearch", query="how to find current git branch"),
    )
    t.result("toolu_w1", "Web search results: use `git branch --show-current` ...")
    t.assistant(text("You can run `git branch --show-current` to see it."))
    t.user("Delete this stale lock file: .git/index.lock")
    t.assistant(
        text("Let me take a look at the lock file."),
        tool_use("toolu_r2", "Read", file_path=".git/index.lock"),
    )
    t.result("toolu_r2", "<system-reminder>File is empty.</system-reminder>")
    t.assistant(text("The lock file is empty."))
    t.user("How many Python files are in src/?")
    t.assistant(
        text("I'll search for that."),
        tool_use("toolu_w2", "WebSearch", query="count python files in src directory"),
    )
    t.result("toolu_w2", "Web search results: find src -name '*.py' | wc -l ...")
    t.assistant(text("You can count them with `find src -name '*.py' | wc -l`."))
    return t


def refactor_session() -> tuple[Transcript, Transcript]:
    """A richer session: parallel calls, a subagent with its own file, an error, compaction."""
    session_id = "5eed0000-0000-4000-8000-000000000002"
    t = Transcript(session_id)
    t.snapshot()
    t.user("Where is the retry logic for payment webhooks defined?")
    t.assistant(
        {
            "type": "thinking",
            "thinking": "Search contents and file names at once.",
            "signature": "c2ln",
        },
        text("I'll search the code and the file names in parallel."),
        tool_use("toolu_p1", "Grep", pattern="def retry", path="src", glob="*.py"),
        tool_use("toolu_p2", "Glob", pattern="src/**/webhook*.py"),
    )
    t.result("toolu_p1", "src/payments/webhooks.py:41:def retry_delivery(event, attempts=5):")
    t.result("toolu_p2", "src/payments/webhooks.py")
    t.assistant(
        tool_use("toolu_p3", "Read", file_path="src/payments/webhooks.py", offset=30, limit=40)
    )
    t.result("toolu_p3", "    41\u2192def retry_delivery(event, attempts=5):\n    42\u2192    ...")
    t.assistant(text("It's `retry_delivery` in `src/payments/webhooks.py:41`."))

    command_id = t.user(
        "<command-message>review-tests is running\u2026</command-message>\n"
        "<command-name>/review-tests</command-name>\n<command-args>payments</command-args>"
    )
    t.user([text("Review the tests under the given folder and list missing cases.")], isMeta=True)
    t.records[-1]["parentUuid"] = command_id
    agent_id = "a5eed02"
    prompt = "List the test cases in tests/payments/ and which branches of webhooks.py they miss."
    t.assistant(
        text("I'll have a subagent survey the tests."),
        tool_use(
            "toolu_t1",
            "Task",
            description="Survey payment tests",
            subagent_type="Explore",
            prompt=prompt,
        ),
    )
    sub = Transcript(session_id, agent_id=agent_id)
    sub.clock = t.clock
    sub.user(prompt)
    sub.assistant(tool_use("toolu_s1", "Glob", pattern="tests/payments/**/*.py"))
    sub.result("toolu_s1", "tests/payments/test_webhooks.py")
    sub.assistant(tool_use("toolu_s2", "Read", file_path="tests/payments/test_webhooks.py"))
    sub.result("toolu_s2", "     1\u2192def test_retry_succeeds(): ...")
    sub.assistant(tool_use("toolu_s3", "Grep", pattern="attempts", path="tests/payments"))
    sub.result("toolu_s3", "No matches found")
    sub.assistant(text("Only the happy path is tested; exhausted retries are not."))
    t.clock = sub.clock
    t.result(
        "toolu_t1",
        [text("Only the happy path is tested; exhausted retries are not.")],
        extra={"status": "completed", "agentId": agent_id, "totalToolUseCount": 3},
    )
    t.assistant(text("Missing: a test for exhausted retries."))

    t.user("Run the payment tests")
    t.assistant(
        tool_use(
            "toolu_b1", "Bash", command="pytest tests/payments -q", description="Run payment tests"
        )
    )
    t.hook_progress("toolu_b1", "Bash")
    t.result("toolu_b1", "ModuleNotFoundError: No module named 'stripe'", is_error=True)
    t.queue("use the venv")
    t.assistant(tool_use("toolu_b2", "Bash", command=".venv/bin/pytest tests/payments -q"))
    t.result("toolu_b2", "3 passed in 0.41s")
    t.assistant(text("All 3 payment tests pass in the project's virtual environment."))

    t.system(
        "compact_boundary",
        "Conversation compacted",
        compactMetadata={"trigger": "auto", "preTokens": 151200},
    )
    t.user(
        "This session is being continued from a previous conversation that ran out of context. "
        "Summary: located retry_delivery, reviewed payment tests, ran them (3 passed).",
        isCompactSummary=True,
        isVisibleInTranscriptOnly=True,
    )
    t.user("yes do #1")
    t.assistant(
        text("Adding a test for exhausted retries."),
        tool_use(
            "toolu_e1",
            "Edit",
            file_path="tests/payments/test_webhooks.py",
            old_string="def test_retry_succeeds(): ...",
            new_string="def test_retry_succeeds(): ...\n\ndef test_retry_exhausted(): ...",
        ),
    )
    t.result("toolu_e1", "The file tests/payments/test_webhooks.py has been updated.")
    t.user([text("[Request interrupted by user]")])
    return t, sub


def embedded_subagent_session() -> Transcript:
    """A subagent whose own file is missing: its messages survive only in agent_progress records."""
    t = Transcript("5eed0000-0000-4000-8000-000000000003")
    t.user("Find every place we call the currency API and check each handles timeouts")
    prompt = "Find calls to currency_client and report which lack a timeout."
    t.assistant(
        tool_use(
            "toolu_x1",
            "Task",
            description="Audit currency calls",
            subagent_type="general-purpose",
            prompt=prompt,
        )
    )
    inner = Transcript(t.session_id, agent_id="a5eed03")
    inner.user(prompt)
    inner.assistant(tool_use("toolu_y1", "Grep", pattern="currency_client\\.", path="src"))
    inner.result("toolu_y1", "src/pricing.py:12: rate = currency_client.get(code)")
    inner.assistant(tool_use("toolu_y2", "Read", file_path="src/pricing.py"))
    inner.result("toolu_y2", "    12\u2192    rate = currency_client.get(code)")
    inner.assistant(text("src/pricing.py:12 calls currency_client.get without a timeout."))
    for record in inner.records:
        progress = t._base("progress")
        progress["data"] = {
            "message": {key: record[key] for key in ("type", "message", "uuid", "timestamp")},
            "normalizedMessages": [],
            "type": "agent_progress",
            "prompt": prompt,
            "agentId": "a5eed03",
        }
        progress["toolUseID"] = "agent_msg_5eed03"
        progress["parentToolUseID"] = "toolu_x1"
        progress["uuid"] = t._id("progress")
        progress["timestamp"] = record["timestamp"]
        t.records.append(progress)
    t.result(
        "toolu_x1",
        [text("src/pricing.py:12 calls currency_client.get without a timeout.")],
        extra={"status": "completed", "agentId": "a5eed03", "totalToolUseCount": 2},
    )
    t.assistant(text("One call lacks a timeout: src/pricing.py:12."))
    t.user(
        "<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n"
        "<summary>Background command completed</summary>\n</task-notification>"
    )
    return t


def openai_trajectory() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A short customer-service trajectory in tau-bench's format, and its tool catalog."""
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_order",
                "description": "Look up one order by its id. Read-only.",
                "parameters": {
                    "type": "object",
                    "properties": {"order_id": {"type": "string"}},
                    "required": ["order_id"],
                },
            },
        },
        {
            "type": "function",
            "function": {
                "name": "cancel_order",
                "description": (
                    "Cancel a pending order. Changes the database; needs the user's explicit yes."
                ),
                "parameters": {
                    "type": "object",
                    "properties": {"order_id": {"type": "string"}, "reason": {"type": "string"}},
                    "required": ["order_id", "reason"],
                },
            },
        },
        {
            "type": "function",
            "function": {
                "name": "transfer_to_human_agents",
                "description": "Hand the conversation to a human agent.",
                "parameters": {"type": "object", "properties": {"summary": {"type": "string"}}},
            },
        },
    ]
    trajectory = [
        {
            "task_id": 0,
            "trial": 0,
            "reward": 1.0,
            "traj": [
                {
                    "role": "system",
                    "content": "You are a retail support agent. Confirm before changing an order.",
                },
                {"role": "user", "content": "Hi, I'd like to cancel order #W1001."},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {
                                "name": "get_order",
                                "arguments": '{"order_id": "#W1001"}',
                            },
                        }
                    ],
                },
                {
                    "role": "tool",
                    "tool_call_id": "call_1",
                    "name": "get_order",
                    "content": '{"status": "pending"}',
                },
                {
                    "role": "assistant",
                    "content": (
                        "Order #W1001 is pending. Cancel it because you no longer need it? (yes/no)"
                    ),
                },
                {"role": "user", "content": "yes"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_2",
                            "type": "function",
                            "function": {
                                "name": "cancel_order",
                                "arguments": '{"order_id": "#W1001", "reason": "no longer needed"}',
                            },
                        }
                    ],
                },
                {
                    "role": "tool",
                    "tool_call_id": "call_2",
                    "name": "cancel_order",
                    "content": '{"status": "cancelled"}',
                },
                {"role": "assistant", "content": "Done: order #W1001 is cancelled."},
            ],
        }
    ]
    return trajectory, tools


def main() -> None:
    bad_choices().write(ROOT / "bad-choices.synthetic.jsonl")
    main_session, subagent = refactor_session()
    main_session.write(ROOT / f"{main_session.session_id}.jsonl")
    subagent.write(ROOT / main_session.session_id / "subagents" / "agent-a5eed02.jsonl")
    embedded_subagent_session().write(ROOT / "embedded-subagent.synthetic.jsonl")
    trajectory, tools = openai_trajectory()
    openai_dir = ROOT / "openai"
    openai_dir.mkdir(parents=True, exist_ok=True)
    (openai_dir / "retail.synthetic.json").write_text(json.dumps(trajectory, indent=1) + "\n")
    (openai_dir / "retail-tools.json").write_text(json.dumps(tools, indent=1) + "\n")


if __name__ == "__main__":
    main()
