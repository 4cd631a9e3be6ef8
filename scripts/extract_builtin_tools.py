"""Reconstruct Claude Code's built-in tools, version by version, from its published npm packages.

Writes ``analysis/data/claude_code_tools.json`` (read by ``analysis.catalog``): every
examined version with the tools it offered, and for each tool name the definitions it had,
each with the inclusive range of examined versions it held in (``until`` null: still
current), its input JSON Schema and Claude Code's own description of it.

For each version in ``VERSIONS`` it runs ``npm pack @anthropic-ai/claude-code@VERSION`` in a
temporary directory (or reuses the tarball already in ``--cache DIR``, and then keeps it) and
reads the package without installing or running it:

* The bundled JavaScript: ``package/cli.js`` up to 2.1.112. From 2.1.113 the package ships a
  native executable instead, so the script also packs
  ``@anthropic-ai/claude-code-linux-x64@VERSION`` and reads the ``// @bun`` modules embedded
  in its binary. A built-in tool is an object literal with a ``name``, an input schema and a
  ``prompt()``, whose name resolves to a string constant and whose ``isEnabled()`` is not
  constantly false (the ``mcp`` placeholder and MCP-style tool listings, which have no
  ``prompt()``, are left out). Its description is what ``prompt()`` returns when that is a
  string constant or a template whose substitutions are constants too; anything computed at
  run time (from the model, settings or other tools) leaves it null. ``always_enabled`` is
  false when ``isEnabled()`` depends on settings, the API provider, environment variables
  or feature flags. A native bundle also defines dozens of account- and flag-gated
  experiments that no public list names, so from 2.1.113 a tool counts only if that
  version's ``sdk-tools.d.ts`` types its input or the previous examined version offered it.
* ``package/sdk-tools.d.ts`` (from 1.0.70 or somewhat earlier): the TypeScript that
  json-schema-to-typescript generated from each tool's input schema, field doc comments
  included, turned back into JSON Schema. Tools it does not type get a null schema.

``VERSIONS`` brackets every change in the built-in tool set: each change lies between an
examined version without it and the next examined version, which has it. When a release
adds, removes or renames a tool, add that version (``--versions A,B --output /tmp/x.json``
examines only the given versions, to locate a change first).

    python scripts/extract_builtin_tools.py [--cache DIR]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "analysis" / "data" / "claude_code_tools.json"
PACKAGE = "@anthropic-ai/claude-code"
NATIVE_PACKAGE = "@anthropic-ai/claude-code-linux-x64"

# Each change in the built-in tool set is bracketed by the last examined version without it
# and the first with it (found from the changelog, then by bisection).
VERSIONS = [
    "1.0.0", "1.0.22", "1.0.45", "1.0.70", "1.0.96", "1.0.98", "1.0.110", "1.0.123",
    "1.0.128", "2.0.0", "2.0.19", "2.0.20", "2.0.21", "2.0.37", "2.0.60", "2.0.64", "2.0.70",
    "2.0.74", "2.1.0", "2.1.3", "2.1.7", "2.1.16", "2.1.22", "2.1.32", "2.1.39", "2.1.50",
    "2.1.59", "2.1.63", "2.1.69", "2.1.71", "2.1.72", "2.1.84", "2.1.98", "2.1.112",
    "2.1.113", "2.1.277", "2.1.332",
]  # fmt: skip

# --- JavaScript: a lexer just good enough to find object literals in minified code ---------

_STRUCTURAL = re.compile(r"""[{}()\[\],"'`/]""")
_REGEX_AFTER = frozenset("(,=:[!&|?{};+-*%<>~^")
_REGEX_KEYWORD = re.compile(
    r"return|typeof|case|do|else|in|of|new|delete|void|throw|instanceof|yield|await"
)
_WORD_END = re.compile(r"[\w$]+$")
_KEY = re.compile(
    r"""\s*(?:async\s*)?\*?\s*(?:get\s+|set\s+)?([A-Za-z_$][\w$]*|"[^"\\]*")\s*([:(])"""
)
_SPREAD = re.compile(r"\s*(\.\.\.[A-Za-z_$][\w$]*)(?=\s*[,}])")
_IDENT = re.compile(r"[A-Za-z_$][\w$]*")
_OBJECT_ASSIGNMENT = re.compile(r"(?<![\w$.])([A-Za-z_$][\w$]*)=\{")


def _regex_allowed(text: str, pos: int) -> bool:
    """Whether a ``/`` at ``pos`` starts a regular expression (and not a division)."""
    i = pos - 1
    while i >= 0 and text[i] in " \t\r\n":
        i -= 1
    if i < 0 or text[i] in _REGEX_AFTER:
        return True
    word = _WORD_END.search(text, max(0, i - 12), i + 1)
    return word is not None and _REGEX_KEYWORD.fullmatch(word.group()) is not None


def _skip_string(text: str, pos: int) -> int:
    quote, i, n = text[pos], pos + 1, len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
        elif c == quote or c == "\n":
            return i + 1
        else:
            i += 1
    return n


def _skip_regex(text: str, pos: int) -> int:
    i, n, in_class = pos + 1, len(text), False
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "\n":
            return i
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "/":
            return i + 1
        i += 1
    return n


def _template_text(text: str, pos: int) -> tuple[int, bool]:
    """From inside a template literal: where its text ends, and whether a ``${`` ends it."""
    i, n = pos, len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
        elif c == "`":
            return i + 1, False
        elif c == "$" and text.startswith("{", i + 1):
            return i + 2, True
        else:
            i += 1
    return n, False


def _events(text: str, pos: int = 0) -> Iterator[tuple[int, str]]:
    """Structural tokens from ``pos``: ``{ } ( ) [ ] ,``, ``${`` and the end of a template
    (``` ` ```), skipping string, regex and comment contents."""
    braces: list[bool] = []  # per open "{" or "${": whether it is a template substitution
    search, n = _STRUCTURAL.search, len(text)
    while (match := search(text, pos)) is not None:
        p = match.start()
        c = text[p]
        if c in "\"'":
            pos = _skip_string(text, p)
        elif c == "`" or (c == "}" and braces and braces[-1]):
            if c == "}":
                braces.pop()
                yield p, "}"
            pos, substitution = _template_text(text, p + 1)
            if substitution:
                braces.append(True)
                yield pos - 2, "${"
            else:
                yield pos - 1, "`"
        elif c == "/":
            following = text[p + 1 : p + 2]
            if following == "/":
                end = text.find("\n", p)
                pos = n if end < 0 else end
            elif following == "*":
                end = text.find("*/", p + 2)
                pos = n if end < 0 else end + 2
            else:
                pos = _skip_regex(text, p) if _regex_allowed(text, p) else p + 1
        else:
            if c == "{":
                braces.append(False)
            elif c == "}" and braces:
                braces.pop()
            yield p, c
            pos = p + 1


def span_end(text: str, pos: int) -> int:
    """The end of the string, template or bracketed span that starts at ``pos``."""
    if text[pos] in "\"'":
        return _skip_string(text, pos)
    template = text[pos] == "`"
    depth = 0
    for offset, token in _events(text, pos):
        if token in ("{", "(", "[", "${"):
            depth += 1
        elif token in ("}", ")", "]"):
            depth -= 1
            if depth == 0 and not template:
                return offset + 1
        elif token == "`" and depth == 0:
            return offset + 1
    return len(text)


def value_end(text: str, pos: int) -> int:
    """The end of the object-literal property value that starts at ``pos``."""
    depth = 0
    for offset, token in _events(text, pos):
        if token in ("{", "(", "[", "${"):
            depth += 1
        elif token in ("}", ")", "]"):
            if depth == 0:
                return offset
            depth -= 1
        elif token == "," and depth == 0:
            return offset
    return len(text)


def object_literals(text: str) -> Iterator[tuple[int, dict[str, int]]]:
    """Each brace-delimited span's start and its top-level keys, mapped to where their value
    (or, for a method, its parameter list) starts; a spread ``...name`` is kept as a key too.
    Blocks come out as well, with whatever looked like keys."""
    stack: list[tuple[int, dict[str, int]] | None] = []
    for offset, token in _events(text):
        if token == "{" or (token == "," and stack and stack[-1] is not None):
            if token == "{":
                stack.append((offset, {}))
            top = stack[-1]
            assert top is not None
            match = _KEY.match(text, offset + 1) or _SPREAD.match(text, offset + 1)
            if match:
                top[1].setdefault(match.group(1).strip('"'), match.end() - 1)
        elif token in ("(", "[", "${"):
            stack.append(None)
        elif token in ("}", ")", "]") and stack:
            top = stack.pop()
            if top is not None:
                yield top


_ESCAPE = re.compile(r"""\\(u\{[0-9A-Fa-f]+\}|u[0-9A-Fa-f]{4}|x[0-9A-Fa-f]{2}|\r\n|[\s\S])""")
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


def _unescape(raw: str) -> str:
    """A JavaScript string's or template's raw text, cooked."""

    def cook(match: re.Match[str]) -> str:
        escape = match.group(1)
        if escape[0] in "ux" and len(escape) > 1:
            return chr(int(escape[1:].strip("{}"), 16))
        if escape in ("\n", "\r\n", "\r", "\u2028", "\u2029"):
            return ""
        return _SIMPLE_ESCAPES.get(escape, escape)

    cooked = _ESCAPE.sub(cook, raw)  # \uD83D\uDE00 pairs become one character:
    return cooked.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


_ASSIGNMENT = re.compile(
    r"""(?<![\w$.])([A-Za-z_$][\w$]*)=(?=["'`]|-?\.?\d[\d.]*(?:e[+-]?\d+)?[,;)}\s])"""
)
_NUMBER = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?")
_FUNCTION = re.compile(r"""\bfunction ([A-Za-z_$][\w$]*)\(\)\{return""")
_RETURN_BODY = re.compile(r"\{\s*return\s*(.*?);?\s*\}", re.DOTALL)
_TOOL_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_IMPORT = re.compile(r"""import\{([^}]*)\}from["']""")
_EXPORT = re.compile(r"""export\{([^}]*)\}""")
_MAX_DEPTH = 8
_MAX_DEFINITIONS = 8


def _specifiers(clause: str) -> Iterator[tuple[str, str]]:
    """``a,b as c`` -> (a, a), (b, c)."""
    for item in clause.split(","):
        names = item.split(" as ")
        if len(names) <= 2 and all(_IDENT.fullmatch(name.strip()) for name in names):
            yield names[0].strip(), names[-1].strip()


def _unique(values: Iterator[str | None]) -> str | None:
    """The one value all definitions agree on; None at the first that does not."""
    agreed: str | None = None
    for value in values:
        if value is None or (agreed is not None and value != agreed):
            return None
        agreed = value
    return agreed


class Bundle:
    """Claude Code's bundled JavaScript (one or more module sources), with the string
    constants, constant-returning functions and cross-module imports indexed so tool names and
    descriptions can be resolved."""

    def __init__(self, sources: list[str]) -> None:
        self.sources = sources
        self.constants: list[dict[str, list[int]]] = []
        self.functions: list[dict[str, list[int]]] = []
        self.imports: list[dict[str, str]] = []
        self.exports: dict[str, list[tuple[int, str]]] = {}
        for module, text in enumerate(sources):
            constants: dict[str, list[int]] = {}
            for match in _ASSIGNMENT.finditer(text):
                constants.setdefault(match.group(1), []).append(match.end())
            functions: dict[str, list[int]] = {}
            for match in _FUNCTION.finditer(text):
                functions.setdefault(match.group(1), []).append(match.end() - len("{return"))
            imports: dict[str, str] = {}
            for match in _IMPORT.finditer(text):
                for exported, local in _specifiers(match.group(1)):
                    imports[local] = exported
            for match in _EXPORT.finditer(text):
                for local, exported in _specifiers(match.group(1)):
                    self.exports.setdefault(exported, []).append((module, local))
            self.constants.append(constants)
            self.functions.append(functions)
            self.imports.append(imports)
        self._resolved: dict[tuple[int, str], str | None] = {}

    def resolve(self, module: int, expression: str, depth: int = 0) -> str | None:
        """The string an expression always evaluates to, or None if that is not evident."""
        expression = expression.strip()
        key = (module, expression)
        if key not in self._resolved:
            self._resolved[key] = None  # also stops a definition that refers to itself
            self._resolved[key] = self._evaluate(module, expression, depth)
        return self._resolved[key]

    def _evaluate(self, module: int, expression: str, depth: int) -> str | None:
        if not expression or depth > _MAX_DEPTH:
            return None
        if expression[0] in "\"'`" and span_end(expression, 0) == len(expression):
            return self._literal(module, expression, depth)
        call = expression.endswith("()")
        name = expression[:-2] if call else expression
        if not _IDENT.fullmatch(name):
            return None
        index = self.functions[module] if call else self.constants[module]
        places = index.get(name, [])
        if places:
            if len(places) > _MAX_DEFINITIONS:  # evidently a variable, not a constant
                return None
            read = self._returned if call else self._literal_at
            return _unique(read(module, place, depth) for place in places)
        exported = self.imports[module].get(name)
        if exported is None or exported not in self.exports:
            return None
        suffix = "()" if call else ""
        return _unique(
            self.resolve(source, local + suffix, depth + 1)
            for source, local in self.exports[exported]
        )

    def _literal_at(self, module: int, start: int, depth: int) -> str | None:
        text = self.sources[module]
        number = _NUMBER.match(text, start)
        if number is not None:  # a number constant, as a template literal prints it
            value = float(number.group())
            return str(int(value)) if value.is_integer() and abs(value) < 1e21 else str(value)
        return self._literal(module, text[start : span_end(text, start)], depth + 1)

    def _returned(self, module: int, start: int, depth: int) -> str | None:
        text = self.sources[module]
        body = _RETURN_BODY.fullmatch(text, start, span_end(text, start))
        return None if body is None else self.resolve(module, body.group(1), depth + 1)

    def _literal(self, module: int, literal: str, depth: int) -> str | None:
        """A string literal's value, or a template's when every substitution resolves."""
        if literal[0] != "`":
            return _unescape(literal[1:-1])
        parts: list[str] = []
        pos = 1
        while True:
            end, substitution = _template_text(literal, pos)
            if not substitution:
                parts.append(_unescape(literal[pos : end - 1]))
                return "".join(parts)
            parts.append(_unescape(literal[pos : end - 2]))
            close = span_end(literal, end - 1)
            value = self.resolve(module, literal[end : close - 1], depth + 1)
            if value is None:
                return None
            parts.append(value)
            pos = close

    def tools(self) -> dict[str, FoundTool]:
        """The built-in tools the bundle defines, by name."""
        found: dict[str, list[FoundTool]] = {}
        for module, text in enumerate(self.sources):
            literals = dict(object_literals(text))
            assigned: dict[str, list[int]] = {}
            for match in _OBJECT_ASSIGNMENT.finditer(text):
                assigned.setdefault(match.group(1), []).append(match.end() - 1)
            for keys in literals.values():
                keys = _with_spreads(keys, literals, assigned)
                if "name" not in keys or not {"inputSchema", "inputJSONSchema"} & keys.keys():
                    continue
                if "prompt" not in keys:  # MCP servers' tool listings have no prompt()
                    continue
                tool = self._tool(module, text, keys)
                if tool is not None:
                    found.setdefault(tool.name, []).append(tool)
        return {name: _merge(name, variants) for name, variants in found.items()}

    def _tool(self, module: int, text: str, keys: dict[str, int]) -> FoundTool | None:
        start = keys["name"] + 1
        if text[keys["name"]] != ":":
            return None
        name = self.resolve(module, text[start : value_end(text, start)])
        enabled = _enabled(text, keys)
        if name is None or name == "mcp" or not _TOOL_NAME.fullmatch(name) or enabled is False:
            return None
        return FoundTool(
            name=name,
            aliases=self._aliases(module, text, keys),
            description=self._prompt(module, text, keys),
            always_enabled=enabled is True,
        )

    def _aliases(self, module: int, text: str, keys: dict[str, int]) -> list[str]:
        if "aliases" not in keys or text[keys["aliases"]] != ":":
            return []
        start = keys["aliases"] + 1
        value = text[start : value_end(text, start)].strip()
        if not value.startswith("[") or not value.endswith("]"):
            return []
        names = [self.resolve(module, item) for item in _split_top_level(value[1:-1])]
        return sorted(name for name in names if name is not None)

    def _prompt(self, module: int, text: str, keys: dict[str, int]) -> str | None:
        """What the tool's ``prompt()`` (its description for the model) returns, if constant."""
        body = _function_body(text, keys["prompt"])
        if body is None:
            return None
        match = _RETURN_BODY.fullmatch(body)
        return None if match is None else self.resolve(module, match.group(1))


def _with_spreads(
    keys: dict[str, int], literals: dict[int, dict[str, int]], assigned: dict[str, list[int]]
) -> dict[str, int]:
    """An object's keys, with those of each ``...base`` spread whose ``base`` is an object
    literal assigned once in the same module (the object's own keys win)."""
    merged: dict[str, int] = {}
    for key in keys:
        bases = assigned.get(key[3:], []) if key.startswith("...") else []
        if len(bases) == 1 and bases[0] in literals:
            merged.update(literals[bases[0]])
    return {**merged, **keys}


def _function_body(text: str, key: int) -> str | None:
    """The block of a method (``prompt(){...}``) or arrow function (``prompt:async()=>...``),
    an expression body given as ``{return ...}``."""
    pos = key
    if text[key] == ":":
        value = text[key + 1 : value_end(text, key + 1)].strip()
        arrow = re.match(r"(?:async\s*)?(?:\(\s*\)|[A-Za-z_$][\w$]*)\s*=>\s*", value)
        if arrow is None:
            return None
        rest = value[arrow.end() :]
        return rest if rest.startswith("{") else "{return " + rest + "}"
    params_end = span_end(text, pos)
    if text[pos:params_end] != "()":
        return None
    block = params_end
    while text[block] in " \t\r\n":
        block += 1
    return text[block : span_end(text, block)] if text[block] == "{" else None


def _split_top_level(text: str) -> list[str]:
    items: list[str] = []
    start = 0
    depth = 0
    for offset, token in _events(text):
        if token in ("{", "(", "[", "${"):
            depth += 1
        elif token in ("}", ")", "]"):
            depth -= 1
        elif token == "," and depth == 0:
            items.append(text[start:offset])
            start = offset + 1
    items.append(text[start:])
    return [item for item in items if item.strip()]


_CONSTANT_ENABLED = re.compile(
    r"(?:\(\)\{return\s*(!0|!1|true|false)\s*;?\}|:\s*\(\)\s*=>\s*(!0|!1|true|false)[,}])"
)


def _enabled(text: str, keys: dict[str, int]) -> bool | None:
    """What the tool's ``isEnabled()`` always returns (absent: true); None if it depends."""
    if "isEnabled" not in keys:
        return True
    match = _CONSTANT_ENABLED.match(text, keys["isEnabled"])
    return None if match is None else (match.group(1) or match.group(2)) in ("!0", "true")


@dataclass
class FoundTool:
    name: str
    aliases: list[str] = field(default_factory=list)
    description: str | None = None
    always_enabled: bool = True


def _merge(name: str, variants: list[FoundTool]) -> FoundTool:
    """One tool from the objects defining the same name (variants, per-mode copies): a
    description only when those whose description resolves agree on it."""
    descriptions = {tool.description for tool in variants if tool.description is not None}
    return FoundTool(
        name=name,
        aliases=sorted({alias for tool in variants for alias in tool.aliases} - {name}),
        description=descriptions.pop() if len(descriptions) == 1 else None,
        always_enabled=any(tool.always_enabled for tool in variants),
    )


# --- sdk-tools.d.ts: json-schema-to-typescript output, back to JSON Schema -------------------

_TS_TOKEN = re.compile(
    r"""\s*(?:(?P<doc>/\*\*.*?\*/)|(?P<comment>/\*.*?\*/|//[^\n]*)"""
    r"""|(?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')|(?P<number>-?\d+(?:\.\d+)?)"""
    r"""|(?P<word>[A-Za-z_$][\w$]*)|(?P<punct>\.\.\.|[{}\[\]()|;:?,<>&=]))""",
    re.DOTALL,
)
_TAG = re.compile(r"@(\w+)\s*(.*)")
_NUMERIC_TAG = re.compile(r"(?:min|max)(?:Items|Length|imum)|exclusive(?:Min|Max)imum")
_PRIMITIVES: dict[str, dict[str, Any]] = {
    "string": {"type": "string"},
    "number": {"type": "number"},
    "boolean": {"type": "boolean"},
    "null": {"type": "null"},
    "unknown": {},
    "any": {},
    "object": {"type": "object"},
}


def _ts_tokens(text: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        match = _TS_TOKEN.match(text, pos)
        if match is None:
            if text[pos:].strip():
                raise ValueError(f"unexpected TypeScript at {text[pos : pos + 40]!r}")
            break
        pos = match.end()
        kind = match.lastgroup
        assert kind is not None
        if kind != "comment":
            tokens.append((kind, match.group(kind)))
    return tokens


def _ts_string(literal: str) -> str:
    """A string literal's value (json-schema-to-typescript writes them JSON-style)."""
    return str(json.loads(literal)) if literal[0] == '"' else literal[1:-1]


def _doc(comment: str) -> tuple[str, dict[str, str]]:
    """A doc comment's text and its ``@tags``."""
    lines = [re.sub(r"^\s*\* ?", "", line) for line in comment[3:-2].strip().splitlines()]
    text: list[str] = []
    tags: dict[str, str] = {}
    for line in lines:
        tag = _TAG.match(line.strip())
        if tag:
            tags[tag.group(1)] = tag.group(2).strip()
        else:
            text.append(line.rstrip())
    return "\n".join(text).strip(), tags


class _TypeParser:
    """Recursive descent over the types json-schema-to-typescript writes."""

    def __init__(self, tokens: list[tuple[str, str]], declarations: dict[str, int]) -> None:
        self.tokens = tokens
        self.pos = 0
        self.declarations = declarations
        self.resolving: set[str] = set()

    def peek(self) -> str:
        return self.tokens[self.pos][1] if self.pos < len(self.tokens) else ""

    def take(self, expected: str | None = None) -> tuple[str, str]:
        token = self.tokens[self.pos]
        if expected is not None and token[1] != expected:
            raise ValueError(f"expected {expected!r}, found {token[1]!r}")
        self.pos += 1
        return token

    def declaration(self, name: str) -> dict[str, Any]:
        """The schema of an exported interface or type alias, by name."""
        if name not in self.declarations or name in self.resolving:
            return {}
        saved = self.pos
        self.resolving.add(name)
        self.pos = self.declarations[name]
        try:
            if self.take()[1] == "interface":
                self.take()  # the name
                return self.object()
            self.take()  # the name
            self.take("=")
            return self.union()
        finally:
            self.resolving.discard(name)
            self.pos = saved

    def union(self) -> dict[str, Any]:
        if self.peek() == "|":
            self.take()
        members = [self.postfix()]
        while self.peek() == "|":
            self.take()
            members.append(self.postfix())
        return _union(members)

    def postfix(self) -> dict[str, Any]:
        schema = self.primary()
        while self.peek() == "[" and self.tokens[self.pos + 1][1] == "]":
            self.pos += 2
            schema = {"type": "array", "items": schema}
        return schema

    def primary(self) -> dict[str, Any]:
        kind, value = self.take()
        if value == "{":
            self.pos -= 1
            return self.object()
        if value == "[":
            items: list[dict[str, Any]] = []
            rest: list[dict[str, Any]] = []
            while self.peek() != "]":
                if self.peek() == "...":  # [T, ...T[]]: at least one, no upper bound
                    self.take()
                    rest.append(self.union().get("items", {}))
                else:
                    items.append(self.union())
                if self.peek() == ",":
                    self.take()
            self.take("]")
            return {"tuple": items, "rest": rest}
        if value == "(":
            inner = self.union()
            self.take(")")
            return inner
        if kind == "string":
            return {"const": _ts_string(value)}
        if kind == "number":
            return {"const": json.loads(value)}
        if value in ("true", "false"):
            return {"const": value == "true"}
        if value in _PRIMITIVES:
            return dict(_PRIMITIVES[value])
        if kind == "word":
            return self.declaration(value)
        raise ValueError(f"unexpected {value!r} in a type")

    def object(self) -> dict[str, Any]:
        self.take("{")
        properties: dict[str, Any] = {}
        required: list[str] = []
        extra: dict[str, Any] | None = None
        doc: tuple[str, dict[str, str]] = ("", {})
        while self.peek() != "}":
            kind, value = self.take()
            if kind == "doc":
                doc = _doc(value)
                continue
            if value == "[":  # index signature: [k: string]: T
                while self.take()[1] != "]":
                    pass
                self.take(":")
                extra = self.union()
            else:
                name = _ts_string(value) if kind == "string" else value
                optional = self.peek() == "?"
                if optional:
                    self.take()
                self.take(":")
                properties[name] = _with_doc(self.union(), *doc)
                if not optional:
                    required.append(name)
            doc = ("", {})
            if self.peek() in (";", ","):
                self.take()
        self.take("}")
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        if extra is None:
            schema["additionalProperties"] = False
        elif extra:
            schema["additionalProperties"] = extra
        return schema


def _union(members: list[dict[str, Any]]) -> dict[str, Any]:
    flat: list[dict[str, Any]] = []
    for member in members:
        flat.extend(member["anyOf"] if list(member) == ["anyOf"] else [member])
    if all("tuple" in member for member in flat):
        return _tuples_as_array(flat)
    if len(flat) == 1:
        return _finish(flat[0])
    constants = [member["const"] for member in flat if list(member) == ["const"]]
    kinds = {_json_type(value) for value in constants}
    if len(constants) == len(flat) and len(kinds) == 1:
        if kinds == {"boolean"}:
            return {"type": "boolean"}
        return {"type": kinds.pop(), "enum": constants}
    return {"anyOf": [_finish(member) for member in flat]}


def _finish(schema: dict[str, Any]) -> dict[str, Any]:
    """A lone literal as an enum of one; a lone tuple as an array."""
    if list(schema) == ["const"]:
        return {"type": _json_type(schema["const"]), "enum": [schema["const"]]}
    if "tuple" in schema:
        return _tuples_as_array([schema])
    return schema


def _json_type(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    return "string" if isinstance(value, str) else "number"


def _tuples_as_array(tuples: list[dict[str, Any]]) -> dict[str, Any]:
    """``[T] | [T, T] | ...`` and ``[T, ...T[]]`` (how minItems and maxItems come out) as an
    array of T."""
    items = [_finish(item) for each in tuples for item in each["tuple"] + each["rest"]]
    schema: dict[str, Any] = {"type": "array"}
    if items and all(item == items[0] for item in items):
        schema["items"] = items[0]
    schema["minItems"] = min(len(each["tuple"]) for each in tuples)
    if not any(each["rest"] for each in tuples):
        schema["maxItems"] = max(len(each["tuple"]) for each in tuples)
    return schema


def _with_doc(schema: dict[str, Any], text: str, tags: dict[str, str]) -> dict[str, Any]:
    schema = _finish(schema)
    if text:
        schema = {"description": text, **schema}
    for tag, value in tags.items():
        if _NUMERIC_TAG.fullmatch(tag) and re.fullmatch(r"-?\d+(?:\.\d+)?", value):
            schema[tag] = json.loads(value)
    return schema


def parse_sdk_tools(text: str) -> dict[str, dict[str, Any]]:
    """The input schema of each tool type in an ``sdk-tools.d.ts``, by interface name
    (``BashInput``, ``FileReadInput``...): the members of ``ToolInputSchemas`` when the file
    has that union, else every exported ``...Input``."""
    tokens = _ts_tokens(text)
    declarations = {
        tokens[i + 2][1]: i + 1
        for i in range(len(tokens) - 2)
        if tokens[i][1] == "export" and tokens[i + 1][1] in ("interface", "type")
    }
    parser = _TypeParser(tokens, declarations)
    names = [name for name in declarations if name.endswith("Input")]
    if "ToolInputSchemas" in declarations:
        start = declarations["ToolInputSchemas"] + 3
        end = next(i for i in range(start, len(tokens)) if tokens[i][1] == ";")
        names = [value for kind, value in tokens[start:end] if value.endswith("Input")]
    return {name: parser.declaration(name) for name in names if name in declarations}


# The d.ts names some tools' input types after the tool's source file or its later name; the
# tool name is the first of these the version's bundle defines.
_INPUT_TYPE_TOOLS = {
    "FileRead": ("Read",),
    "FileEdit": ("Edit",),
    "FileWrite": ("Write",),
    "FileMultiEdit": ("MultiEdit",),
    "Ls": ("LS",),
    "Agent": ("Agent", "Task"),
    "TaskStop": ("TaskStop", "KillShell", "KillBash"),
    "KillShell": ("KillShell", "KillBash"),
    "TaskOutput": ("TaskOutput", "BashOutput"),
    "ListMcpResources": ("ListMcpResourcesTool",),
    "ReadMcpResource": ("ReadMcpResourceTool",),
    "ReadMcpResourceDir": ("ReadMcpResourceDirTool",),
    "AgentOutput": ("AgentOutputTool",),
}


def schemas_by_tool(
    input_types: dict[str, dict[str, Any]], tools: dict[str, FoundTool]
) -> dict[str, dict[str, Any]]:
    """The d.ts input schemas of the bundle's tools, keyed by tool name."""
    by_tool: dict[str, dict[str, Any]] = {}
    for type_name, schema in input_types.items():
        base = type_name.removesuffix("Input")
        snake = re.sub(r"(?<!^)(?=[A-Z])", "_", base).lower()  # ProposeSkills: propose_skills
        for candidate in _INPUT_TYPE_TOOLS.get(base, (base, snake)):
            owner = next(
                (tool.name for tool in tools.values() if candidate in (tool.name, *tool.aliases)),
                None,
            )
            if owner is not None:
                by_tool.setdefault(owner, schema)
                break
    return by_tool


# --- packages -----------------------------------------------------------------------------


def _tarball(package: str, version: str, directory: Path) -> Path:
    """``npm pack``'s tarball of one published version, downloaded into ``directory`` unless
    it is already there."""
    name = f"{package.lstrip('@').replace('/', '-')}-{version}.tgz"
    path = directory / name
    if not path.exists():
        subprocess.run(
            ["npm", "pack", f"{package}@{version}", "--pack-destination", str(directory)],
            check=True,
            capture_output=True,
        )
    return path


def _members(tarball: Path, wanted: set[str]) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    with tarfile.open(tarball, "r:gz") as archive:
        for member in archive:
            if member.name in wanted and member.isfile():
                content = archive.extractfile(member)
                assert content is not None
                found[member.name] = content.read()
    return found


def bundle_sources(blob: bytes) -> list[str]:
    """The JavaScript in ``cli.js`` (one source) or in a Bun-compiled executable (each
    embedded ``// @bun`` module, up to its terminating NUL)."""
    if not blob.startswith(b"\x7fELF"):
        return [blob.decode("utf-8", "replace")]
    sources: list[str] = []
    start = blob.find(b"// @bun")
    while start >= 0:
        end = blob.find(b"\x00", start)
        end = len(blob) if end < 0 else end
        sources.append(blob[start:end].decode("utf-8", "replace"))
        start = blob.find(b"// @bun", end)
    return sources


@dataclass
class Examined:
    version: str
    tools: dict[str, dict[str, Any]]
    """Tool name -> {"always_enabled", "aliases", "input_schema", "description"}."""
    native: bool
    """Read from the native executable's modules (2.1.113 on), not from cli.js."""


def examine(version: str, directory: Path, keep: bool) -> Examined:
    """The built-in tools of one published version."""
    tarball = _tarball(PACKAGE, version, directory)
    files = _members(tarball, {"package/cli.js", "package/sdk-tools.d.ts"})
    downloaded = [tarball]
    blob = files.get("package/cli.js")
    if blob is None:
        native = _tarball(NATIVE_PACKAGE, version, directory)
        downloaded.append(native)
        blob = _members(native, {"package/claude"})["package/claude"]
    if not keep:
        for path in downloaded:
            path.unlink()
    sources = bundle_sources(blob)
    tools = Bundle(sources).tools()
    dts = files.get("package/sdk-tools.d.ts")
    schemas = schemas_by_tool(parse_sdk_tools(dts.decode()) if dts else {}, tools)
    return Examined(
        version,
        {
            name: {
                "always_enabled": tool.always_enabled,
                "aliases": tool.aliases,
                "input_schema": schemas.get(name),
                "description": tool.description,
            }
            for name, tool in sorted(tools.items())
        },
        native=len(sources) > 1,
    )


# --- the data file ------------------------------------------------------------------------


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version))


def settle(examined: list[Examined]) -> list[Examined]:
    """The examined versions in order, each native one keeping only the tools its
    sdk-tools.d.ts types or the previous examined version already offered (its bundle also
    defines dozens of account- and flag-gated experiments that no public list names)."""
    settled: list[Examined] = []
    for each in sorted(examined, key=lambda each: version_key(each.version)):
        if each.native and settled:
            offered = settled[-1].tools.keys()
            each = Examined(
                each.version,
                {
                    name: tool
                    for name, tool in each.tools.items()
                    if tool["input_schema"] is not None or name in offered
                },
                native=True,
            )
        settled.append(each)
    return settled


def build(examined: list[Examined]) -> dict[str, Any]:
    """Per-tool definitions with inclusive version ranges (identical consecutive definitions
    merged), and the tool set of every examined version."""
    examined = settle(examined)
    newest = examined[-1].version
    tools: dict[str, list[dict[str, Any]]] = {}
    previous: dict[str, dict[str, Any]] = {}
    for each in examined:
        for name, definition in each.tools.items():
            ranges = tools.setdefault(name, [])
            if previous.get(name) == definition:
                ranges[-1]["until"] = each.version
            else:
                ranges.append({"since": each.version, "until": each.version, **definition})
        previous = each.tools
    for ranges in tools.values():
        for definition in ranges:
            if definition["until"] == newest:
                definition["until"] = None
            if not definition["aliases"]:
                del definition["aliases"]
    return {
        "description": (
            "Claude Code's built-in tools by version, read from its npm packages by "
            "scripts/extract_builtin_tools.py. since/until: inclusive range of examined "
            "versions in which a definition held (until null: still current)."
        ),
        "package": PACKAGE,
        "versions": [{"version": each.version, "tools": sorted(each.tools)} for each in examined],
        "tools": dict(sorted(tools.items())),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, help="keep (and reuse) downloaded tarballs here")
    parser.add_argument("--versions", help="comma-separated versions (default: VERSIONS)")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    versions = args.versions.split(",") if args.versions else VERSIONS
    with tempfile.TemporaryDirectory() as scratch:
        directory = args.cache or Path(scratch)
        directory.mkdir(parents=True, exist_ok=True)
        data = build([examine(version, directory, args.cache is not None) for version in versions])
    for each in data["versions"]:
        print(f"{each['version']}: {', '.join(each['tools'])}", file=sys.stderr)
    args.output.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", "utf-8")


if __name__ == "__main__":
    main()
