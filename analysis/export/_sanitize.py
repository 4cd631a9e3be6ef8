"""Remove secrets and personal data from sessions before anything leaves the machine.

Explicit patterns catch the well-known credential shapes, passwords in URLs, ``.env``-style
assignments, e-mail addresses and user names in home paths; detect-secrets' plugins catch
the rest (keywords, high-entropy strings, vendor tokens). Long tool arguments and results are
cut to a configurable size after redaction, so a secret is never left half visible.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from functools import cache
from typing import Any, cast

from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.plugins.base import BasePlugin

from analysis.export._paths import HOME_USER
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
        "basic_auth",
        re.compile(r"(?i)\b(authorization\s*:\s*basic\s+)[A-Za-z0-9+/=_\-]{6,}"),
        lambda m: f"{m.group(1)}[REDACTED:basic_auth]",
    ),
    (
        "auth_header",
        re.compile(
            r"(?i)\b((?:authorization|proxy-authorization|x-api-key|api-key|x-auth-token|"
            r"x-access-token|private-token)\s*:\s*(?:token\s+|apikey\s+)?)"
            r"(?!\[REDACTED|bearer\s|basic\s)([^\s\"',;]{6,})"
        ),
        lambda m: f"{m.group(1)}[REDACTED:auth_header]",
    ),
    (
        "command_password",
        re.compile(
            r"(\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n|;&]*?\s-p)"
            r"(?!\[REDACTED)([^\s\"']+)"
        ),
        lambda m: f"{m.group(1)}[REDACTED:password]",
    ),
    (
        "command_password",
        re.compile(
            r"((?:^|\s)--(?:password|passwd|pass|token|api-key)(?:=|\s+)[\"']?)"
            r"(?!\[REDACTED)([^\s\"']+)"
        ),
        lambda m: f"{m.group(1)}[REDACTED:password]",
    ),
    (
        "command_password",
        re.compile(r"((?:^|\s)(?:-u|--user)\s+[\"']?[^\s:\"']+:)(?!\[REDACTED)([^\s\"'@]+)"),
        lambda m: f"{m.group(1)}[REDACTED:password]",
    ),
    (
        # A file as Claude Code's Read tool returns it has a line-number prefix ("  12→" or
        # "12<tab>") before each line.
        "env_assignment",
        re.compile(
            r"(?m)^(\s*(?:\d+(?:→|\t))?\s*(?:export\s+)?[A-Z][A-Z0-9_]*"
            r"(?:KEY|SECRET|TOKEN|PASSWORD|PASSWD|PASS|PWD|CREDENTIALS?)"
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
        # "my DB password is hunter2", "the token was: abc123…": the next word after the verb,
        # when it holds something besides letters (so "the password is correct" stays).
        "password_in_prose",
        re.compile(
            r"(?i)\b((?:password|passwd|passcode|passphrase|pwd|pin|api key|secret key|token)"
            r"(?:\s+(?:for|of|on|to)\s+\S+)?\s+(?:is|was|are|=)\s*:?\s+[\"'`]?)"
            r"(?!\[REDACTED)(?=[^\s\"'`]*[^A-Za-z\s\"'`.,;!?)])([^\s\"'`]{4,}?)([\"'`.,;!?)]*(?:\s|$))"
        ),
        lambda m: f"{m.group(1)}[REDACTED:password]{m.group(3)}",
    ),
    (
        "email",
        re.compile(r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}\b"),
        "[REDACTED:email]",
    ),
    ("home_user", HOME_USER, lambda m: f"{m.group(1)}USER"),
]


# Any ``name = value`` / ``name: value`` / ``"name": "value"`` / ``name => value`` (shell, env,
# YAML, JSON, TOML, INI, headers, connection strings): the name decides how sure we must be.
_ASSIGNMENT = re.compile(
    r"(?P<name>[A-Za-z_][A-Za-z0-9_.\-]{0,60})(?P<sep>[\"']?[ \t]*(?:=>|:=|=|:)[ \t]*[\"']?)"
    r"(?!\[REDACTED)(?P<value>[^\s\"'`,;{}()\[\]<>]{6,})"
)
_SECRET_NAME = re.compile(
    r"(?i)(pass(?:wd|word|phrase)?|pwd|secret|token|credential|api[_-]?key|apikey|"
    r"access[_-]?key|private[_-]?key|client[_-]?key)"
)
_KEYISH_NAME = re.compile(r"(?i)(key|auth|cookie|salt|signature|session|sig)")
_CODE_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_NOT_A_VALUE = {
    "any",
    "bool",
    "boolean",
    "bytes",
    "false",
    "none",
    "null",
    "number",
    "optional",
    "required",
    "secretstr",
    "string",
    "true",
    "undefined",
}


def _entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def _looks_secret(name: str, value: str) -> bool:
    if value.startswith(("$", "%", "{{", "${")) or value.lower() in _NOT_A_VALUE:
        return False
    if _CODE_PATH.fullmatch(value) or set(value) <= {"*", "x", "X", "."}:
        return False
    if _SECRET_NAME.search(name):
        return True
    return bool(_KEYISH_NAME.search(name)) and len(value) >= 16 and _entropy(value) >= 3.5


class Sanitizer:
    """Redacts strings and counts what it redacted, by kind."""

    def __init__(self, max_chars: int | None = DEFAULT_MAX_CHARS) -> None:
        self.max_chars = max_chars
        self.counts: Counter[str] = Counter()

    def text(self, value: str, *, truncate: bool = False) -> str:
        for kind, pattern, replacement in _PATTERNS:
            value, found = pattern.subn(replacement, value)
            self.counts[kind] += found
        value = _ASSIGNMENT.sub(self._assignment, value)
        value = self._detect_secrets(value)
        if truncate and self.max_chars is not None and len(value) > self.max_chars:
            self.counts["truncated"] += 1
            value = f"{value[: self.max_chars]}…[+{len(value) - self.max_chars} chars removed]"
        return value

    def _assignment(self, match: re.Match[str]) -> str:
        if not _looks_secret(match["name"], match["value"]):
            return match[0]
        self.counts["secret_assignment"] += 1
        return f"{match['name']}{match['sep']}[REDACTED:secret_value]"

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
