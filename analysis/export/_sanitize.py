"""Remove secrets and personal data from sessions before anything leaves the machine.

Explicit patterns catch the well-known credential shapes, passwords in URLs, ``.env``-style
assignments, e-mail addresses and user names in home paths; detect-secrets' plugins catch
the rest (keywords, high-entropy strings, vendor tokens). Long tool arguments and results are
cut to a configurable size after redaction, so a secret is never left half visible.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from functools import cache
from typing import Any, cast

from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.plugins.base import BasePlugin

from analysis.models import AssistantMessage, Session

DEFAULT_MAX_CHARS = 2000
_MIN_DETECTED_CHARS = 8

# (kind, pattern, replacement): the replacement may keep non-secret groups.
_PATTERNS: list[tuple[str, re.Pattern[str], str | Callable[[re.Match[str]], str]]] = [
    (
        "private_key",
        re.compile(
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)"
        ),
        "[REDACTED:private_key]",
    ),
    ("anthropic_key", re.compile(r"sk-ant-[A-Za-z0-9_\-]{16,}"), "[REDACTED:anthropic_key]"),
    (
        "openai_key",
        re.compile(r"sk-(?:proj-|svcacct-)?[A-Za-z0-9_\-]{20,}"),
        "[REDACTED:openai_key]",
    ),
    ("aws_key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), "[REDACTED:aws_key]"),
    (
        "aws_key",
        re.compile(r"(?i)(aws_secret_access_key\s*[=:]\s*)[\"']?[A-Za-z0-9/+=]{30,}[\"']?"),
        lambda m: f"{m.group(1)}[REDACTED:aws_key]",
    ),
    (
        "github_token",
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{20,})"),
        "[REDACTED:github_token]",
    ),
    ("slack_token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), "[REDACTED:slack_token]"),
    (
        "bearer_token",
        re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9\-._~+/]{12,}=*"),
        lambda m: f"{m.group(1)}[REDACTED:bearer_token]",
    ),
    (
        "url_password",
        re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.\-]*://[^/\s:@]+:)([^@\s/]+)@"),
        lambda m: f"{m.group(1)}[REDACTED:password]@",
    ),
    (
        "env_assignment",
        re.compile(
            r"(?im)^(\s*(?:export\s+)?[A-Z][A-Z0-9_]*(?:KEY|SECRET|TOKEN|PASSWORD|PASSWD|PWD|CREDENTIALS?)"
            r"[A-Z0-9_]*\s*=\s*)(?!\[REDACTED)(\S+)"
        ),
        lambda m: f"{m.group(1)}[REDACTED:env_value]",
    ),
    (
        "secret_assignment",
        re.compile(
            r"(?i)\b((?:api[_-]?key|access[_-]?key|secret|token|password|passwd)[\"']?\s*[:=]\s*[\"']?)"
            r"(?!\[REDACTED)([^\s\"',;]{8,})"
        ),
        lambda m: f"{m.group(1)}[REDACTED:secret_value]",
    ),
    (
        "email",
        re.compile(r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}\b"),
        "[REDACTED:email]",
    ),
    (
        "home_user",
        re.compile(r"(/home/|/Users/|[A-Za-z]:\\Users\\)(?!USER\b)([^/\\\s\"']+)"),
        lambda m: f"{m.group(1)}USER",
    ),
]


class Sanitizer:
    """Redacts strings and counts what it redacted, by kind."""

    def __init__(self, max_chars: int | None = DEFAULT_MAX_CHARS) -> None:
        self.max_chars = max_chars
        self.counts: Counter[str] = Counter()

    def text(self, value: str, *, truncate: bool = False) -> str:
        for kind, pattern, replacement in _PATTERNS:
            value, found = pattern.subn(replacement, value)
            self.counts[kind] += found
        value = self._detect_secrets(value)
        if truncate and self.max_chars is not None and len(value) > self.max_chars:
            self.counts["truncated"] += 1
            value = f"{value[: self.max_chars]}…[+{len(value) - self.max_chars} chars removed]"
        return value

    def _detect_secrets(self, value: str) -> str:
        for line in value.splitlines():
            if len(line) < _MIN_DETECTED_CHARS:
                continue
            for plugin in _plugins():
                for secret in plugin.analyze_line(filename="transcript", line=line, line_number=0):
                    found = secret.secret_value
                    if found and len(found) >= _MIN_DETECTED_CHARS and found in value:
                        value = value.replace(found, f"[REDACTED:{_slug(secret.type)}]")
                        self.counts[f"detect_secrets:{_slug(secret.type)}"] += 1
        return value

    def value(self, node: Any, *, truncate: bool) -> Any:
        """Redact every string inside a JSON-like value (tool arguments)."""
        if isinstance(node, str):
            return self.text(node, truncate=truncate)
        if isinstance(node, dict):
            return {key: self.value(item, truncate=truncate) for key, item in node.items()}
        if isinstance(node, list):
            return [self.value(item, truncate=truncate) for item in node]
        return node

    def session(self, session: Session) -> Session:
        """A copy of ``session`` with every free-text field redacted."""
        clean = session.model_copy(deep=True)
        clean.source = self.text(clean.source)
        if clean.cwd:
            clean.cwd = self.text(clean.cwd)
        if clean.system_prompt:
            clean.system_prompt = self.text(clean.system_prompt)
        for turn in clean.turns:
            turn.ask = self.text(turn.ask)
            if turn.expanded_prompt:
                turn.expanded_prompt = self.text(turn.expanded_prompt)
            for event in turn.events:
                event.text = self.text(event.text)
            self._messages(turn.messages)
        return clean

    def _messages(self, messages: list[AssistantMessage]) -> None:
        """Redact responses in place, their subagents' responses included."""
        for message in messages:
            message.text = self.text(message.text)
            message.thinking = self.text(message.thinking)
            for call in message.tool_calls:
                call.input = self.value(call.input, truncate=True)
                if call.result is not None:
                    call.result.content = self.text(call.result.content, truncate=True)
                if call.subagent is not None:
                    call.subagent.prompt = self.text(call.subagent.prompt)
                    self._messages(call.subagent.messages)

    def summary(self) -> dict[str, int]:
        return {kind: n for kind, n in sorted(self.counts.items()) if n}


@cache
def _plugins() -> list[BasePlugin]:
    """Every detect-secrets plugin with its default settings (entropy limits included)."""
    factories = cast(dict[str, Callable[[], BasePlugin]], get_mapping_from_secret_type_to_class())
    return [factory() for factory in factories.values()]


def _slug(kind: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", kind.lower()).strip("_")
