"""Reading JSON Lines and JSON documents without ever aborting on bad input.

Every problem becomes a :class:`ParseIssue` naming the file and line; every valid record
around it is kept.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

import msgspec
import orjson
from pydantic import ValidationError

from analysis.models import ParseIssue

Decode = Callable[[bytes], Any]

MAX_NESTING = 200
"""Objects and arrays nested deeper than this are refused: nothing real nests so deep, and
deeper values break recursive code downstream (validation, export, JSON output)."""
TOO_DEEP = f"nested more than {MAX_NESTING} levels deep; skipped"

_BOMS = (
    (b"\xff\xfe\x00\x00", "utf-32"),
    (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
)


def without_bom(data: bytes) -> bytes:
    """UTF-8 bytes of a file: a UTF-8 byte-order mark dropped; UTF-16 or UTF-32 with a
    byte-order mark (what a Windows shell redirect writes) decoded and re-encoded."""
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:]
    for mark, codec in _BOMS:
        if data.startswith(mark):
            return data.decode(codec, errors="replace").encode("utf-8")
    return data


def too_deep(value: Any, limit: int = MAX_NESTING) -> bool:
    """Whether containers nest more than ``limit`` levels inside ``value`` (no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list | tuple):
            children = node
        elif hasattr(node, "__struct_fields__"):
            children = [getattr(node, name) for name in node.__struct_fields__]
        else:
            continue
        if depth >= limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


class TooDeep(json.JSONDecodeError):
    """JSON text nested past ``MAX_NESTING``: reported like any other bad JSON."""

    def __init__(self) -> None:
        super().__init__(f"nested more than {MAX_NESTING} levels deep", "", 0)


def loads_bounded(text: str | bytes) -> Any:
    """``json.loads`` that refuses deep nesting with :class:`TooDeep` instead of recursing."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise TooDeep() from None
    if too_deep(value):
        raise TooDeep()
    return value


def _may_be_deep(line: bytes) -> bool:
    """A cheap pre-check: a line with fewer brackets than the limit cannot nest past it."""
    if len(line) <= 2 * MAX_NESTING:
        return False
    braces = line.count(b"{")
    return braces > MAX_NESTING or braces + line.count(b"[") > MAX_NESTING


def _describe_json_error(error: Exception) -> str:
    return str(error).replace("line 1 column", "column")


def iter_jsonl(
    data: bytes,
    file: str,
    issues: list[ParseIssue],
    decode: Decode = orjson.loads,
) -> Iterator[tuple[int, Any]]:
    """Yield ``(line number, value)`` for each JSON line; problems go to ``issues``.

    ``decode`` may be a typed decoder that rejects a record of the wrong shape: that record
    becomes an issue too. Values are yielded one at a time, so what a caller drops is freed.
    """
    lines = data.split(b"\n")
    last = len(lines)
    if lines and lines[-1] == b"":
        lines.pop()
        last = -1  # the file ends with a newline: no line is truncated
    for number, line in enumerate(lines, start=1):
        if not line or line.isspace():
            continue
        try:
            value = decode(line)
        except msgspec.ValidationError as error:
            issues.append(ParseIssue(file=file, line=number, reason=_shape_reason(error)))
            continue
        except RecursionError:
            issues.append(ParseIssue(file=file, line=number, reason=TOO_DEEP))
            continue
        except ValueError as error:
            value = _recover(line, number, number == last, error, file, issues, decode)
            if value is None:
                continue
        if _may_be_deep(line) and too_deep(value):
            issues.append(ParseIssue(file=file, line=number, reason=TOO_DEEP))
            continue
        yield number, value


def _shape_reason(error: Exception) -> str:
    if str(error).startswith("Expected `object`"):
        return "record is not a JSON object"
    return f"record of the wrong shape ({error})"


def _recover(
    line: bytes,
    number: int,
    is_unterminated_last: bool,
    error: Exception,
    file: str,
    issues: list[ParseIssue],
    decode: Decode,
) -> Any:
    """Salvage a line with bytes that are not UTF-8; anything else is reported and dropped."""
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as decode_error:
        try:
            value = decode(line.decode("utf-8", errors="replace").encode())
        except ValueError:
            value = None
        kept = "kept with U+FFFD in their place" if value is not None else "line dropped"
        issues.append(
            ParseIssue(
                file=file,
                line=number,
                reason=f"bytes that are not UTF-8 at column {decode_error.start + 1}; {kept}",
            )
        )
        return value
    if is_unterminated_last:
        reason = "truncated last line (no closing newline, not complete JSON)"
    else:
        reason = f"not valid JSON ({_describe_json_error(error)})"
    issues.append(ParseIssue(file=file, line=number, reason=reason))
    return None


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def read_json_document(data: bytes, file: str) -> tuple[Any, list[ParseIssue]]:
    """Parse a whole JSON document; on a syntax error, the issue names the line."""
    issues: list[ParseIssue] = []
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    else:
        if _may_be_deep(data) and too_deep(value):
            return None, [ParseIssue(file=file, reason=TOO_DEEP)]
        return value, issues
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        text = data.decode("utf-8", errors="replace")
        issues.append(
            ParseIssue(
                file=file,
                line=data.count(b"\n", 0, error.start) + 1,
                reason="bytes that are not UTF-8; replaced with U+FFFD",
            )
        )
    try:
        return loads_bounded(text), issues
    except TooDeep:
        issues.append(ParseIssue(file=file, reason=TOO_DEEP))
    except json.JSONDecodeError as error:
        issues.append(_not_valid_json(file, error))
    return None, issues


def _not_valid_json(file: str, error: json.JSONDecodeError) -> ParseIssue:
    return ParseIssue(
        file=file,
        line=error.lineno,
        reason=f"not valid JSON ({error.msg}: column {error.colno})",
    )


def iter_json_array(data: bytes, file: str, issues: list[ParseIssue]) -> Iterator[tuple[int, Any]]:
    """Yield the elements of a top-level JSON array with the line each starts on.

    A broken element ends the walk with an issue; every element before it is kept.
    """
    text = data.decode("utf-8", errors="replace")
    decoder = json.JSONDecoder()
    index = _skip_space(text, 0)
    if not text.startswith("[", index):
        issues.append(ParseIssue(file=file, line=_line_of(text, index), reason="not a JSON array"))
        return
    index = _skip_space(text, index + 1)
    if text.startswith("]", index):
        return
    while index < len(text):
        try:
            value, end = decoder.raw_decode(text, index)
        except RecursionError:
            issues.append(ParseIssue(file=file, line=_line_of(text, index), reason=TOO_DEEP))
            return
        except json.JSONDecodeError as error:
            issues.append(_not_valid_json(file, error))
            return
        if too_deep(value):
            issues.append(ParseIssue(file=file, line=_line_of(text, index), reason=TOO_DEEP))
        else:
            yield _line_of(text, index), value
        index = _skip_space(text, end)
        if text.startswith("]", index):
            return
        if not text.startswith(",", index):
            issues.append(
                ParseIssue(
                    file=file,
                    line=_line_of(text, index),
                    reason="not valid JSON (expected ',' or ']' between array elements)",
                )
            )
            return
        index = _skip_space(text, index + 1)
    issues.append(ParseIssue(file=file, line=_line_of(text, index), reason="truncated JSON array"))


def _skip_space(text: str, index: int) -> int:
    while index < len(text) and text[index] in " \t\r\n":
        index += 1
    return index


def first_error(error: ValidationError) -> str:
    """The first problem pydantic found, as ``field.path: message`` for a one-line issue."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "value"
    return f"{where}: {first['msg']}"


def timestamp(value: Any) -> str | None:
    """The value if it is an ISO 8601 timestamp the models accept, else None."""
    if not isinstance(value, str):
        return None
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return None
    return value
