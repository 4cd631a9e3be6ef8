"""What is wrong with a record of the wrong shape, in words an issue can carry.

The readers declare the records they read as :mod:`msgspec` structs; a value of the wrong
type is refused where it is read. :func:`shape_problem` turns msgspec's refusal
(``Expected `str | null`, got `int` - at `$.payload.call_id```) into the field and what is
wrong with it (``payload.call_id``, ``is an integer, not a string``).
"""

from __future__ import annotations

import re

import msgspec

_EXPECTED = re.compile(
    r"^Expected `(?P<expected>[^`]+)`(?:, got `(?P<got>[^`]+)`)?(?: - at `\$(?P<path>[^`]*)`)?$"
)
_MISSING = re.compile(
    r"^Object missing required field `(?P<field>[^`]+)`(?: - at `\$(?P<path>[^`]*)`)?$"
)
_INVALID = re.compile(r"^Invalid value (?P<value>.+?)(?: - at `\$(?P<path>[^`]*)`)?$")
_WORDS = {
    "str": "a string",
    "int": "an integer",
    "float": "a number",
    "bool": "true or false",
    "null": "null",
    "array": "a list",
    "object": "an object",
}


def _words(name: str) -> str:
    return _WORDS.get(name, f"`{name}`")


def _expected(names: str) -> str:
    """``str | null`` is "a string" (null is never the value that was wrong), ``int | float``
    "a number", ``str | object | null`` "a string or an object"."""
    listed = [name for name in names.split(" | ") if name != "null"] or ["null"]
    if {"int", "float"} <= set(listed):
        listed.remove("int")
    words = [_words(name) for name in listed]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def _path(path: str | None, field: str | None = None) -> str:
    """``.payload.content[0]`` as ``payload.content[0]``; the record itself is ""."""
    where = (path or "").removeprefix(".")
    if field is not None:
        where = f"{where}.{field}" if where else field
    return where


def shape_problem(error: msgspec.ValidationError) -> tuple[str, str]:
    """The field a typed decoder refused (``""`` for the value itself) and what is wrong
    with it: ``is an integer, not a string``, ``is missing``, ``is 'x', not one of those
    read``."""
    message = str(error)
    found = _EXPECTED.match(message)
    if found is not None:
        expected = _expected(found["expected"])
        got = found["got"]
        problem = f"is {_words(got)}, not {expected}" if got else f"is not {expected}"
        return _path(found["path"]), problem
    found = _MISSING.match(message)
    if found is not None:
        return _path(found["path"], found["field"]), "is missing"
    found = _INVALID.match(message)
    if found is not None:
        return _path(found["path"]), f"is {found['value']}, not one of those read"
    return "", f"is of the wrong shape ({message})"
