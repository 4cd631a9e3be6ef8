"""Opt-in send: sanitized, previewed, and sent to a real OTLP/HTTP receiver on loopback."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import tsq
from otlp_receiver import Receiver
from records import SESSION, assistant, result, text, tool_use, user

import analysis
from analysis.export import Sanitizer

# Each planted secret must never reach the receiver, in any field.
PLANTED = {
    "anthropic": "sk-ant-api03-Q7zVbNw2XkLmP9rT4yHs8dFgJ1cVbN3mK5pL",
    "openai": "sk-proj-4fGhJkLmNpQrStUvWxYz0123456789abcdEF",
    "aws_id": "AKIAZ7XQ3PLM9RTV2WYB",
    "aws_secret": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Lm3Nv0a",
    "github": "ghp_R8cLq2WvX9mZt4YbN7kPs1DfG3hJ6aQe0UoI",
    "slack": "xoxb-2384729384-9283749283-AbCdEfGhIjKlMnOpQrSt",
    "bearer": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcDEF123",
    "url_password": "s3cr3t-Pa55word",
    "env": "Zx9!qWerty-Env-Value",
    "email": "jane.doe@example.org",
    "home": "janedoe",
    "keyword": "hunter2hunter2hunter2",
    "private_key": "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
    "read_tool_env": "Kp7vR2qLx9Read",
    "mysql": "W1nterIsC0ming",
    "curl_user": "Tr0ub4dor3Curl",
    "basic_auth": "ZGVwbG95OlRyMHViNGRvcjM=",
    "prose": "correcthorse42",
}


def _secret_transcript(write_jsonl):
    env_file = f"ANTHROPIC_API_KEY={PLANTED['anthropic']}\nDB_PASSWORD={PLANTED['env']}\nDEBUG=1"
    key_block = (
        "-----BEGIN RSA PRIVATE KEY-----\n"
        + PLANTED["private_key"]
        + "\n-----END RSA PRIVATE KEY-----"
    )
    return write_jsonl(
        [
            user("u1", f"use my key {PLANTED['openai']} and mail {PLANTED['email']}"),
            assistant(
                "a1",
                "m1",
                tool_use(
                    "t1",
                    "Bash",
                    command=(
                        f"curl -H 'Authorization: Bearer {PLANTED['bearer']}' "
                        f"https://admin:{PLANTED['url_password']}@db.internal/x"
                    ),
                ),
            ),
            result("r1", "t1", env_file),
            assistant(
                "a2",
                "m2",
                tool_use("t2", "Read", file_path=f"/home/{PLANTED['home']}/.aws/credentials"),
            ),
            result(
                "r2",
                "t2",
                f"[default]\naws_access_key_id = {PLANTED['aws_id']}\n"
                f"aws_secret_access_key = {PLANTED['aws_secret']}\n",
            ),
            assistant(
                "a3", "m3", text(f"Found GITHUB token {PLANTED['github']} and {PLANTED['slack']}")
            ),
            user("u2", f'set password = "{PLANTED["keyword"]}" and here is the key:\n{key_block}'),
            assistant("a4", "m4", tool_use("t4", "Read", file_path="/srv/app/.env")),
            result("r4", "t4", f"     1→DEBUG=1\n     2→DB_PASSWORD={PLANTED['read_tool_env']}"),
            assistant(
                "a5",
                "m5",
                tool_use(
                    "t5",
                    "Bash",
                    command=(
                        f"mysql -u root -p{PLANTED['mysql']} app < d.sql && "
                        f"curl -u deploy:{PLANTED['curl_user']} https://ci.internal && "
                        f"curl -H 'Authorization: Basic {PLANTED['basic_auth']}' https://x"
                    ),
                ),
            ),
            result("r5", "t5", "ok"),
            user("u3", f"my DB password is {PLANTED['prose']}, can you connect?"),
        ]
    )


def _tsq(*args, input_text=None):
    return tsq(*args, input=input_text)


def test_sanitizer_removes_every_planted_secret():
    sanitizer = Sanitizer()
    blob = "\n".join(
        [
            f"export ANTHROPIC_API_KEY={PLANTED['anthropic']}",
            f"client = OpenAI(api_key='{PLANTED['openai']}')",
            f"aws_access_key_id = {PLANTED['aws_id']}",
            f"aws_secret_access_key = {PLANTED['aws_secret']}",
            f"git remote set-url origin https://{PLANTED['github']}@github.com/o/r",
            f"SLACK_BOT={PLANTED['slack']}",
            f"Authorization: Bearer {PLANTED['bearer']}",
            f"postgres://admin:{PLANTED['url_password']}@db.internal:5432/app",
            f"DB_PASSWORD={PLANTED['env']}",
            f"contact {PLANTED['email']}",
            f"path /home/{PLANTED['home']}/x and /Users/{PLANTED['home']}/y",
            f'password = "{PLANTED["keyword"]}"',
            "-----BEGIN PRIVATE KEY-----",
            PLANTED["private_key"],
            "-----END PRIVATE KEY-----",
        ]
    )
    clean = sanitizer.text(blob)
    for kind, value in PLANTED.items():
        assert value not in clean, kind
    assert "/home/USER/x" in clean
    assert "/Users/USER/y" in clean
    assert sanitizer.summary()["email"] == 1


# The kinds that real coding sessions leak and that simple patterns miss.
LEAKY = {
    "read_tool_arrow": ("     1→DB_PASSWORD=Kp7#vR2qLx9", "Kp7#vR2qLx9"),
    "read_tool_tab": ("12\tSTRIPE_SECRET=sk_test_51HqLmN0pQ", "sk_test_51HqLmN0pQ"),
    "mysql": ("mysql -u root -pW1nterIsC0ming appdb < dump.sql", "W1nterIsC0ming"),
    "curl_user": ("curl -u deploy:Tr0ub4dor3 https://ci.internal/api", "Tr0ub4dor3"),
    "basic_auth": ("Authorization: Basic ZGVwbG95OlRyMHViNGRvcjM=", "ZGVwbG95OlRyMHViNGRvcjM="),
    "prose": ("my DB password is correcthorse42, can you connect?", "correcthorse42"),
    "yaml": ("database:\n  client_secret: Zq8vN2mLp4Wc", "Zq8vN2mLp4Wc"),
    "json": ('{"db_pass": "Tr0ub4dor&3", "host": "db"}', "Tr0ub4dor&3"),
    "ini": ("[database]\npassword = Sup3rS3cretIni", "Sup3rS3cretIni"),
    "connection_string": ("Server=db;Uid=sa;Pwd=Y0uRp4ssCs;", "Y0uRp4ssCs"),
    "header": ("x-api-key: 9f8e7d6c5b4a3f2e1d0c", "9f8e7d6c5b4a3f2e1d0c"),
    "high_entropy_key": (
        'stripe_key = "rk_live_51Hh2kLmNoPqRsTuVwXyZ012"',
        "rk_live_51Hh2kLmNoPqRsTuVwXyZ012",
    ),
}


@pytest.mark.parametrize("kind", sorted(LEAKY))
def test_sanitizer_removes_the_kinds_real_sessions_leak(kind):
    text_, secret = LEAKY[kind]
    sanitizer = Sanitizer()
    clean = sanitizer.text(text_)
    assert secret not in clean
    assert "[REDACTED:" in clean
    assert sum(sanitizer.summary().values()) >= 1


def test_sanitizer_keeps_ordinary_text():
    sanitizer = Sanitizer()
    text_ = (
        "Where is the retry logic for payment webhooks defined? See src/payments/webhooks.py:41."
    )
    assert sanitizer.text(text_) == text_
    assert sanitizer.summary() == {}
    code = [
        "mkdir -p build && ssh -p 22 deploy@host",
        "rows.sort(key=lambda row: row.name)",
        "def login(token: str, password: str) -> None:",
        "monkey = banana",
        "export DEBUG=1",
        "The password is checked by verify_password() in auth.py.",
    ]
    for line in code:
        assert sanitizer.text(line) == line.replace("deploy@host", "deploy@host"), line


def test_send_delivers_sanitized_spans_and_no_secret(write_jsonl):
    path = _secret_transcript(write_jsonl)
    with Receiver() as receiver:
        done = _tsq(
            "send", str(path), "--endpoint", receiver.url, "--header", "x-api-key=team-key", "--yes"
        )
        assert done.returncode == 0, done.stderr
        assert "Sent: 1 of 1 sessions (3 traces) accepted." in done.stdout
        assert "About to send" in done.stdout
        assert "redacted:" in done.stdout
        (request,) = receiver.behaviour.requests
        assert receiver.behaviour.headers[0]["x-api-key"] == "team-key"
        assert receiver.behaviour.headers[0]["Content-Type"] == "application/x-protobuf"
    wire = request.SerializeToString().decode("utf-8", errors="replace")
    for kind, value in PLANTED.items():
        assert value not in wire, kind
    spans = [span for rs in request.resource_spans for ss in rs.scope_spans for span in ss.spans]
    names = sorted(span.name for span in spans)
    assert names.count("invoke_agent claude-code") == 3
    assert "execute_tool Bash" in names
    assert any(name.startswith("chat ") for name in names)


def test_judgments_travel_as_evaluation_events_with_their_reasoning_redacted(write_jsonl, tmp_path):
    path = _secret_transcript(write_jsonl)
    votes = [
        {"verdict": "incorrect", "reasoning": "It ran curl with a live token."},
        {"verdict": "correct", "reasoning": f"Reading is fine; {PLANTED['github']} was printed."},
        {"verdict": "correct", "reasoning": "Second correct vote."},
    ]
    row = {
        "session_id": SESSION,
        "turn_index": 0,
        "step_index": 1,
        "message_id": "m2",
        "parent_call_id": None,
        "score": 2 / 3,
        "votes": votes,
        "n_requested": 3,
        "n_valid": 3,
        "n_discarded": 0,
        "model": "judge-x",
        "spec_name": "tsq-rubric/1",
        "condition": "full",
        "catalog_size": 10,
        "call_rendered": True,
        "context_chars": 0,
    }
    judgments = tmp_path / "judged.jsonl"
    judgments.write_text(
        json.dumps(row) + "\n" + json.dumps({**row, "condition": "bare", "step_index": 0}) + "\n"
    )
    with Receiver() as receiver:
        done = _tsq(
            "send", str(path), "--endpoint", receiver.url, "--yes", "--judgments", str(judgments)
        )
        assert done.returncode == 0, done.stderr
        (request,) = receiver.behaviour.requests
    assert "5 steps (chat spans), 1 evaluations" in done.stdout
    wire = request.SerializeToString().decode("utf-8", errors="replace")
    assert PLANTED["github"] not in wire
    spans = [span for rs in request.resource_spans for ss in rs.scope_spans for span in ss.spans]
    (judged,) = [span for span in spans if span.events]
    values = {a.key: a.value for a in judged.attributes}
    assert (values["tsq.step.index"].int_value, values["gen_ai.response.id"].string_value) == (
        1,
        "m2",
    )
    (event,) = judged.events
    got = {a.key: a.value for a in event.attributes}
    assert event.name == "gen_ai.evaluation.result"
    assert got["gen_ai.evaluation.score.value"].double_value == 2 / 3
    assert got["gen_ai.evaluation.score.label"].string_value == "split"
    explanation = got["gen_ai.evaluation.explanation"].string_value
    assert explanation.startswith("Reading is fine; ")  # the majority's first reasoning
    assert "[REDACTED" in explanation


def test_nothing_is_sent_without_yes_when_no_one_can_answer(write_jsonl):
    path = _secret_transcript(write_jsonl)
    with Receiver() as receiver:
        done = _tsq("send", str(path), "--endpoint", receiver.url, input_text="y\n")
        assert done.returncode == 1
        assert "Not sent" in done.stderr
        assert receiver.behaviour.requests == []


@pytest.mark.parametrize(
    ("behaviour", "expected"),
    [
        ({"status": 401}, "rejected the request with HTTP 401: receiver says no"),
        ({"status": 500}, "failed with HTTP 500"),
        ({"delay": 3.0}, "did not answer in time"),
    ],
)
def test_failures_say_one_sentence_and_exit_non_zero(write_jsonl, behaviour, expected):
    path = _secret_transcript(write_jsonl)
    with Receiver() as receiver:
        for key, value in behaviour.items():
            setattr(receiver.behaviour, key, value)
        done = _tsq("send", str(path), "--endpoint", receiver.url, "--yes", "--timeout", "1")
    assert done.returncode == 1
    assert expected in done.stderr
    assert "0 of 1 sessions (0 traces) accepted" in done.stderr
    assert "Traceback" not in done.stderr


def test_connection_refused_and_partial_delivery(write_jsonl, tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    first = _secret_transcript(write_jsonl)
    done = _tsq("send", str(first), "--endpoint", f"http://127.0.0.1:{closed}/v1/traces", "--yes")
    assert done.returncode == 1
    assert "could not connect" in done.stderr
    second = write_jsonl([user("u1", "hello")], name="other/second.jsonl")
    with Receiver() as receiver:
        receiver.behaviour.fail_after = 1
        done = _tsq("send", str(first), str(second), "--endpoint", receiver.url, "--yes")
        assert len(receiver.behaviour.requests) == 1
    assert done.returncode == 1
    assert "1 of 2 sessions (3 traces) accepted" in done.stderr


def test_subagents_are_sent_sanitized_under_their_spawning_call():
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    from analysis.export import prepare

    corpus = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "claude-code" / "spotter"
    (session,) = analysis.load([corpus / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"]).sessions
    spawner = next(c for c in session.tool_calls() if c.subagent is not None)
    sub_call = next(spawner.subagent.tool_calls())
    sub_call.input = {**sub_call.input, "note": f"token {PLANTED['anthropic']}"}
    (prepared,), preview = prepare([session])
    request = ExportTraceServiceRequest.FromString(prepared.payload)
    wire = prepared.payload.decode("utf-8", errors="replace")
    assert PLANTED["anthropic"] not in wire
    spans = [span for rs in request.resource_spans for ss in rs.scope_spans for span in ss.spans]
    by_id = {span.span_id: span for span in spans}
    nested = [s for s in spans if s.name.startswith("invoke_agent") and by_id.get(s.parent_span_id)]
    assert nested, "a subagent's invoke_agent span under its spawning call"
    parent = by_id[nested[0].parent_span_id]
    assert parent.name == f"execute_tool {spawner.name}"
    expected_sub_calls = sum(1 for _ in spawner.subagent.tool_calls())
    under = [s for s in spans if s.parent_span_id == nested[0].span_id]
    assert sum(s.name.startswith("execute_tool") for s in under) == expected_sub_calls
    assert preview.steps == prepared.steps


def test_a_closed_standard_input_is_one_sentence(write_jsonl):
    path = _secret_transcript(write_jsonl)
    command = f"{sys.executable} -m analysis send {path} --endpoint http://127.0.0.1:9/v1 <&-"
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "Not sent: pass --yes to send without a terminal to confirm on." in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("endpoint", ["http://collector:notaport/v1/traces", "collector:4318"])
def test_an_invalid_endpoint_url_is_one_sentence(write_jsonl, endpoint):
    path = _secret_transcript(write_jsonl)
    done = _tsq("send", str(path), "--endpoint", endpoint, "--yes")
    assert done.returncode == 1
    assert f"{endpoint!r} is not" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_servers_error_body_is_shown_printable_and_short(write_jsonl):
    path = _secret_transcript(write_jsonl)
    with Receiver() as receiver:
        receiver.behaviour.status = 400
        receiver.behaviour.error_body = b"\x1b[31mbad\x07 request " + b"x" * 5000 + b"\nsecond"
        done = _tsq("send", str(path), "--endpoint", receiver.url, "--yes")
    assert done.returncode == 1
    (line,) = [line for line in done.stderr.splitlines() if "HTTP 400" in line]
    assert "\x1b" not in line
    assert "\x07" not in line
    assert "second" not in line
    assert len(line) < 400


@pytest.mark.parametrize("max_chars", ["2000", "4000", "8000"])
def test_a_token_where_results_are_cut_never_leaves_half_visible(write_jsonl, max_chars):
    token = PLANTED["github"]
    output = "log line\n" * 441 + f"pushed with {token} ok\n" + "y" * 2000
    assert output.index(token) < 4000 < output.index(token) + len(token)
    path = write_jsonl(
        [
            user("u1", "why does CI fail?"),
            assistant("a1", "m1", tool_use("t1", "Bash", command="cat ci.log")),
            result("r1", "t1", output),
        ]
    )
    with Receiver() as receiver:
        done = _tsq(
            "send", str(path), "--endpoint", receiver.url, "--yes", "--max-chars", max_chars
        )
        assert done.returncode == 0, done.stderr
        (request,) = receiver.behaviour.requests
    wire = request.SerializeToString().decode("utf-8", errors="replace")
    assert token[:8] not in wire
