"""Opt-in send: sanitized, previewed, and sent to a real OTLP/HTTP receiver on loopback."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest
from otlp_receiver import Receiver
from records import assistant, result, text, tool_use, user

from analysis._sanitize import Sanitizer

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
        ]
    )


def _tsq(*args, input_text=None):
    return subprocess.run(
        [sys.executable, "-m", "analysis", *args],
        capture_output=True,
        text=True,
        input=input_text,
        timeout=120,
    )


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


def test_sanitizer_keeps_ordinary_text():
    sanitizer = Sanitizer()
    text_ = (
        "Where is the retry logic for payment webhooks defined? See src/payments/webhooks.py:41."
    )
    assert sanitizer.text(text_) == text_
    assert sanitizer.summary() == {}


def test_send_delivers_sanitized_spans_and_no_secret(write_jsonl):
    path = _secret_transcript(write_jsonl)
    with Receiver() as receiver:
        done = _tsq(
            "send", str(path), "--endpoint", receiver.url, "--header", "x-api-key=team-key", "--yes"
        )
        assert done.returncode == 0, done.stderr
        assert "Sent: 1 of 1 sessions (2 traces) accepted." in done.stdout
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
    assert names.count("invoke_agent claude-code") == 2
    assert "execute_tool Bash" in names
    assert any(name.startswith("chat ") for name in names)


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
    assert "1 of 2 sessions (2 traces) accepted" in done.stderr
