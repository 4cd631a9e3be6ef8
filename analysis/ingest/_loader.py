"""One entry point for every input: files or folders, sniffed by content, never aborting."""

from __future__ import annotations

import gc
import os
import stat
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from analysis._jsonio import (
    first_error,
    iter_json_array,
    iter_jsonl,
    read_json_document,
    without_bom,
)
from analysis.catalog import catalog_from_document, looks_like_catalog, read_catalog_file
from analysis.ingest._claude_code import (
    SUBAGENTS_DIR,
    ParsedTranscript,
    looks_like_claude_code,
    parse_claude_code,
)
from analysis.ingest._codex import looks_like_codex, parse_codex
from analysis.ingest._context import DEFAULT_MAX_RESULT_CHARS, ParseContext
from analysis.ingest._openai import looks_like_trajectory, parse_trajectory
from analysis.ingest._otlp import looks_like_otlp, parse_otlp
from analysis.ingest._registered import registered
from analysis.ingest._roots import OUTSIDE_REASON, inside_root
from analysis.models import Judgment, LoadResult, ParseIssue, Session, ToolCatalog

TRANSCRIPT_SUFFIXES = (".jsonl", ".json", ".ndjson")
_SNIFF_LINES = 50


SCORER_FILES = frozenset({"card.json", "model.skops"})
"""What a step scorer's folder holds (``analysis.scorer``): a folder with both is no
transcripts, and is not read."""


def _walk(folder: Path, given: str | Path, issues: list[ParseIssue]) -> list[tuple[str, bool]]:
    """The transcript-like files under ``folder`` (their paths, as strings under it), each with
    whether it is a link, in the order of their paths' parts; hidden ones and those of hidden
    folders, and step scorers' folders, left out. Links to folders are not followed (a link
    loop, or ``/proc/self/cwd``, would never end); a folder that cannot be listed is an issue
    (one that vanished while being walked is not: ``/proc``). What the file system said while
    listing is used, so a plain file costs no call of its own."""
    found: list[tuple[str, bool]] = []
    pending = [str(folder)]
    while pending:
        top = pending.pop()
        try:
            with os.scandir(top) as listing:
                entries = [entry for entry in listing if not entry.name.startswith(".")]
        except FileNotFoundError:
            continue
        except OSError as error:
            shown = Path(given) / Path(error.filename or top).relative_to(folder)
            reason = f"folder cannot be read ({error.strerror or error})"
            issues.append(ParseIssue(file=str(shown), reason=reason))
            continue
        folders = [entry for entry in entries if _is_folder(entry)]
        files = [entry for entry in entries if not _is_folder(entry)]
        if {entry.name for entry in files} >= SCORER_FILES:  # tsq scorer train --out
            continue
        pending.extend(entry.path for entry in folders)
        attached = os.path.basename(top) == SUBAGENTS_DIR and os.path.isfile(
            os.path.dirname(top) + ".jsonl"
        )
        for entry in files:
            if (
                os.path.splitext(entry.name)[1] in TRANSCRIPT_SUFFIXES
                and _is_file(entry)
                and not (attached and entry.name.startswith("agent-"))
            ):
                found.append((entry.path, entry.is_symlink()))
    return sorted(found, key=lambda item: item[0].split(os.sep))


def _is_folder(entry: os.DirEntry[str]) -> bool:
    """A folder to walk into: a real one, not a link to one."""
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _is_file(entry: os.DirEntry[str]) -> bool:
    """A file, or a link to one."""
    try:
        return entry.is_file()
    except OSError:
        return False


def discover(
    paths: Iterable[str | Path], root: str | Path | None = None
) -> tuple[list[tuple[Path, str]], list[ParseIssue]]:
    """Expand folders recursively into transcript-like files, each with its display name.

    A file reached twice (given, and inside a given folder) is listed once, under the name
    it was first reached by. With a ``root``, a path (given, or a link found in a folder)
    that resolves outside it is an issue, not read.
    """
    files, issues, _ = discover_resolved(paths, root)
    return [(Path(path), display) for path, display in files], issues


def discover_resolved(
    paths: Iterable[str | Path], root: str | Path | None = None
) -> tuple[list[tuple[str, str]], list[ParseIssue], list[str]]:
    """:func:`discover` with each file's path as a string (no path object made for each of
    a hundred thousand files), and each file's resolved path (what the index keys files on)."""
    found: dict[str, tuple[str, str]] = {}
    issues: list[ParseIssue] = []

    def add(path: str | Path, display: str, resolved: str | None = None) -> None:
        """``resolved``, when the caller knows it: a file reached through real folders."""
        if resolved is None:
            if root is not None and not inside_root(path, root):
                issues.append(ParseIssue(file=display, reason=OUTSIDE_REASON))
                return
            resolved = os.path.realpath(path)
        found.setdefault(resolved, (os.fspath(path), display))

    for given in paths:
        path = Path(given).expanduser()
        if root is not None and not inside_root(path, root):
            issues.append(ParseIssue(file=str(given), reason=OUTSIDE_REASON))
        elif path.is_dir():
            # Under a folder, only a link can lead elsewhere: the folders on the way are real
            # (links to folders are not walked), so a plain file's resolved path is the
            # folder's with the rest of the way after it, inside the root with the folder.
            within, real = len(os.path.join(path, "")), str(path.resolve())
            shown = str(Path(given))
            for child, link in _walk(path, given, issues):
                rest = child[within:]
                display = rest if shown == "." else os.path.join(shown, rest)
                add(child, display, None if link else os.path.join(real, rest))
        elif path.is_file():
            add(path, str(given))
        else:
            issues.append(ParseIssue(file=str(given), reason=_not_a_file(path)))
    return list(found.values()), issues, list(found)


def _not_a_file(path: Path) -> str:
    """What a path that is neither a file nor a folder is, for its issue."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return "no such file or folder"
    if stat.S_ISFIFO(mode):
        return "is a named pipe (FIFO), not a file; not read"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device, not a file; not read"
    if stat.S_ISSOCK(mode):
        return "is a socket, not a file; not read"
    return "is not a regular file; not read"


def _sniff_lines(data: bytes) -> Format | None:
    """The line format the first lines that parse are in (the first of :data:`LINE_FORMATS`
    that recognises one of them), else None."""
    for line in _head_lines(data, _SNIFF_LINES):
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        found = next((f for f in LINE_FORMATS if f.recognises(record)), None)
        if found is not None:
            return found
    return None


def _looks_like_judgment(record: Any) -> bool:
    """A line of ``tsq judge --out``."""
    return isinstance(record, dict) and {"spec_name", "turn_index", "score"} <= record.keys()


def _head_lines(data: bytes, count: int) -> Iterator[bytes]:
    """The first ``count`` non-blank lines, without copying the rest of the file."""
    start = 0
    while count > 0 and start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end == -1 else end
        line = data[start:end]
        start = end + 1
        if line.strip():
            count -= 1
            yield line


def _is_json_document(data: bytes) -> bool:
    """A whole-file JSON value (array, or a pretty-printed object), as opposed to JSON Lines."""
    head = data.lstrip()[:1]
    if head == b"[":
        return True
    if head != b"{":
        return False
    lines = list(_head_lines(data, 5))
    if len(lines) == 1:
        try:
            return not looks_like_claude_code(orjson.loads(lines[0]))
        except orjson.JSONDecodeError:
            return True
    return not any(_parses_as_object(line) for line in lines)


def _parses_as_object(line: bytes) -> bool:
    try:
        return isinstance(orjson.loads(line), dict)
    except orjson.JSONDecodeError:
        return False


class _RepeatedHistory:
    """Drops, from each Claude Code session, the history an earlier-loaded file already gave.

    ``claude --resume`` and ``--continue`` write the earlier conversation again into the new
    session's file, with the same ``message.id``s and record ``uuid``s. The first file loaded
    keeps each model response; a later file drops its copy, and a turn whose opening record
    was already loaded and that is left with no response of its own.
    """

    def __init__(self) -> None:
        self.response_sources: dict[str, str] = {}
        """``message.id`` -> the file that loaded that response."""
        self.ask_uuids: set[str] = set()

    def drop_repeats(self, session: dict[str, Any], ask_uuids: list[str | None]) -> None:
        """``ask_uuids``: the uuid of the user record that opened each of the session's turns."""
        skipped_from: Counter[str] = Counter()
        turns: list[dict[str, Any]] = []
        for turn, ask_uuid in zip(session["turns"], ask_uuids, strict=True):
            messages = []
            for message in turn["messages"]:
                earlier = self.response_sources.get(message["id"])
                if earlier is None:
                    messages.append(message)
                else:
                    skipped_from[earlier] += 1
            if not messages and ask_uuid in self.ask_uuids:
                continue
            turn["messages"] = messages
            turn["index"] = len(turns)
            turns.append(turn)
        session["turns"] = turns
        self._remember(session["source"], ask_uuids, turns)
        if skipped_from:
            count = skipped_from.total()
            responses = "model response" if count == 1 else "model responses"
            reason = (
                f"{count} {responses} already loaded from {', '.join(skipped_from)} skipped "
                "(resumed session)"
            )
            session["issues"].append(ParseIssue(file=session["source"], reason=reason).model_dump())

    def _remember(
        self, source: str, ask_uuids: list[str | None], turns: list[dict[str, Any]]
    ) -> None:
        self.ask_uuids.update(uuid for uuid in ask_uuids if uuid is not None)
        for turn in turns:
            for message in turn["messages"]:
                self.response_sources[message["id"]] = source


def _span(parsed: ParsedTranscript) -> tuple[datetime, datetime]:
    """When a transcript's conversation began and ended (its first and last turn). A resumed
    session begins with the history it repeats, so it ties on the start and ends later."""
    moments = [
        datetime.fromisoformat(turn["timestamp"])
        for turn in (parsed.session or {}).get("turns", [])
        if turn.get("timestamp")
    ]
    aware = [m if m.tzinfo else m.replace(tzinfo=UTC) for m in moments]
    latest = datetime.max.replace(tzinfo=UTC)
    return min(aware, default=latest), max(aware, default=latest)


class _Loader:
    def __init__(self, max_result_chars: int | None, root: Path | None = None) -> None:
        self.max_result_chars = max_result_chars
        self.root = root
        self.result = LoadResult()
        self.catalogs_by_folder: dict[Path, list[ToolCatalog]] = {}
        self.openai_by_folder: dict[Path, list[Session]] = {}
        self.history = _RepeatedHistory()
        self.transcripts: list[tuple[ParsedTranscript, Path]] = []
        self.file_order: dict[str, int] = {}

    def load_file(self, path: Path, display: str) -> None:
        self.result.files_read += 1
        self.file_order.setdefault(display, len(self.file_order))
        try:
            data = without_bom(path.read_bytes())
        except OSError as error:
            self._issue(display, None, f"cannot be read ({error.strerror})")
            return
        if not data.strip():
            self._issue(display, None, "is empty")
            return
        if _is_json_document(data):
            self._load_json_document(path, display, data)
        else:
            self._load_jsonl(path, display, data)

    def _issue(self, file: str, line: int | None, reason: str) -> None:
        self.result.issues.append(ParseIssue(file=file, line=line, reason=reason))

    def _add_session(self, raw: dict[str, Any], folder: Path) -> None:
        try:
            session = Session.model_validate(raw)
        except ValidationError as error:
            self._issue(
                raw.get("source", "?"), None, f"session could not be built ({first_error(error)})"
            )
            return
        self.result.sessions.append(session)
        if session.format == "openai" and not session.catalogs:
            self.openai_by_folder.setdefault(folder, []).append(session)

    def _load_jsonl(self, path: Path, display: str, data: bytes) -> None:
        found = _sniff_lines(data)
        if found is None:
            self._not_a_transcript(display)
        else:
            found.read(self, path, display, data)

    def _add_transcript(self, path: Path, display: str, data: bytes) -> None:
        context = self._context(display)
        parsed = parse_claude_code(path, data, context)
        self.result.files_read += parsed.subagent_files_read
        if parsed.session is None:
            self.result.issues.extend(context.issues)
            self._issue(display, None, "is a Claude Code transcript with no conversation in it")
            return
        self.transcripts.append((parsed, path.parent))

    def _add_otlp_lines(self, path: Path, display: str, data: bytes) -> None:
        for _line, document in iter_jsonl(data, display, self.result.issues):
            self._add_otlp(document, display, path)

    def _add_judgment_lines(self, _path: Path, display: str, data: bytes) -> None:
        self._load_judgments(data, display)

    def _add_trajectory_lines(self, path: Path, display: str, data: bytes) -> None:
        lines = iter_jsonl(data, display, self.result.issues)
        for position, (line, item) in enumerate(lines):
            self._add_trajectory(item, display, line, path, position)

    def _add_rollout(self, path: Path, display: str, data: bytes) -> None:
        context = self._context(display)
        raw = parse_codex(path, data, context)
        if raw is None:
            self.result.issues.extend(context.issues)
            self._issue(display, None, "is a Codex rollout with no turn in it")
            return
        self._add_session(raw, path.parent)

    def _context(self, display: str) -> ParseContext:
        return ParseContext(display, [], self.max_result_chars, self.root)

    def _add_trajectory(
        self, item: Any, display: str, line: int, path: Path, position: int
    ) -> None:
        context = self._context(display)
        raw = parse_trajectory(item, line, path.stem, position, context)
        if raw is None:
            self.result.issues.extend(context.issues)
            return
        raw["issues"] = [issue.model_dump() for issue in context.issues]
        self._add_session(raw, path.parent)

    def _load_judgments(self, data: bytes, display: str) -> None:
        for line, record in iter_jsonl(data, display, self.result.issues):
            try:
                self.result.judgments.append(Judgment.model_validate(record))
            except ValidationError as error:
                self._issue(display, line, f"not a judgment ({first_error(error)})")

    def _add_otlp(self, document: Any, display: str, path: Path) -> None:
        if not looks_like_otlp(document):
            self._issue(display, None, "a line that is not an OTLP/JSON document; skipped")
            return
        context = self._context(display)
        sessions, judgments = parse_otlp(document, context)
        if not sessions:
            self.result.issues.extend(context.issues)
            self._issue(display, None, "is an OTLP/JSON document with no spans")
        for raw in sessions:
            self._add_session(raw, path.parent)
        self.result.judgments.extend(judgments)

    def _load_json_document(self, path: Path, display: str, data: bytes) -> None:
        if data.lstrip()[:1] == b"[":
            issues: list[ParseIssue] = []
            items = list(iter_json_array(data, display, issues))
            self.result.issues.extend(issues)
            values = [value for _, value in items]
            if values and looks_like_catalog(values):
                self._add_catalog(values, display, path.parent)
            elif values and looks_like_trajectory(values):
                self._add_trajectory(values, display, items[0][0], path, 0)
            elif any(looks_like_trajectory(value) for value in values):
                for position, (line, value) in enumerate(items):
                    self._add_trajectory(value, display, line, path, position)
            elif not issues:
                self._not_a_transcript(display)
            return
        document, issues = read_json_document(data, display)
        self.result.issues.extend(issues)
        if document is None:
            return
        found = next((f for f in DOCUMENT_FORMATS if f.recognises(document)), None)
        if found is None:
            self._not_a_transcript(display)
        else:
            found.read(self, path, display, data, document)

    def _catalog_document(self, path: Path, display: str, _data: bytes, document: Any) -> None:
        self._add_catalog(document, display, path.parent)

    def _otlp_document(self, path: Path, display: str, _data: bytes, document: Any) -> None:
        self._add_otlp(document, display, path)

    def _trajectory_document(self, path: Path, display: str, _data: bytes, document: Any) -> None:
        self._add_trajectory(document, display, 1, path, 0)

    def _judgment_document(self, _path: Path, display: str, data: bytes, _document: Any) -> None:
        self._load_judgments(data, display)  # a judgments file of one line

    def _add_catalog(self, document: Any, display: str, folder: Path) -> None:
        catalog = catalog_from_document(document, display, "trace", self.result.issues)
        self.result.catalogs.append(catalog)
        self.catalogs_by_folder.setdefault(folder, []).append(catalog)

    def _not_a_transcript(self, display: str) -> None:
        self._issue(
            display,
            None,
            "is not a transcript this workbench reads (Claude Code JSONL, Codex rollouts, "
            "OpenAI-format trajectories, OTLP/JSON traces) nor a tool catalog "
            "(tsq ingest --formats lists them)",
        )

    def add_transcripts(self) -> None:
        """Claude Code sessions, once every file is read, oldest first: the session that was
        resumed keeps the history its continuation repeats, whichever file sorts first. The
        sessions are then listed in file order."""
        registry = registered()
        for parsed, folder in sorted(self.transcripts, key=lambda item: _span(item[0])):
            assert parsed.session is not None
            self.history.drop_repeats(parsed.session, parsed.ask_uuids)
            registry.annotate(parsed.session)
            self._add_session(parsed.session, folder)
        self.result.sessions.sort(key=lambda s: self.file_order.get(s.source, len(self.file_order)))

    def attach_catalogs(self, explicit: ToolCatalog | None) -> None:
        """Give catalog-less OpenAI-format sessions the explicit catalog, or the one beside them."""
        for folder, sessions in self.openai_by_folder.items():
            beside = self.catalogs_by_folder.get(folder, [])
            catalog = explicit or (beside[0] if len(beside) == 1 else None)
            for session in sessions:
                if catalog is not None:
                    session.attach_catalog(catalog)


@dataclass(frozen=True)
class Format:
    """One kind of file the loader reads: how to recognise it, and how to read it."""

    name: str
    what: str
    recognises: Callable[[Any], bool]
    """For a line format, a parsed line among the first ones; for a document, the document."""
    read: Callable[..., None]
    """A ``_Loader`` method: ``(path, display, data)``, a document's also ``document``."""


LINE_FORMATS = (
    Format("codex", "Codex rollout", looks_like_codex, _Loader._add_rollout),
    Format(
        "claude-code",
        "Claude Code transcript, stream-json included",
        looks_like_claude_code,
        _Loader._add_transcript,
    ),
    Format(
        "otlp", "OTLP/JSON traces, one document a line", looks_like_otlp, _Loader._add_otlp_lines
    ),
    Format(
        "judgments",
        "tsq judge --out",
        _looks_like_judgment,
        _Loader._add_judgment_lines,
    ),
    Format(
        "trajectories",
        "OpenAI chat-format trajectories, one a line",
        looks_like_trajectory,
        _Loader._add_trajectory_lines,
    ),
)
"""The JSON-lines formats, in the order they are tried on a file's first lines: adding an
agent's format is one entry here and its parser's module."""
DOCUMENT_FORMATS = (
    Format("catalog", "tool catalog", looks_like_catalog, _Loader._catalog_document),
    Format("otlp", "OTLP/JSON traces", looks_like_otlp, _Loader._otlp_document),
    Format(
        "trajectories",
        "OpenAI chat-format trajectory, or a JSON list of them",
        looks_like_trajectory,
        _Loader._trajectory_document,
    ),
    Format(
        "judgments", "one tsq judge --out line", _looks_like_judgment, _Loader._judgment_document
    ),
)
"""The whole-file JSON formats, in the order they are tried on the document."""


def formats() -> list[dict[str, str]]:
    """What the loader reads, as ``tsq ingest --formats`` lists it: each format's ``name``,
    ``kind`` (``lines``: JSON Lines, recognised by its first lines; ``document``: one JSON
    value) and ``what`` it is, in the order they are tried."""
    return [
        {"name": f.name, "kind": kind, "what": f.what}
        for kind, table in (("lines", LINE_FORMATS), ("document", DOCUMENT_FORMATS))
        for f in table
    ]


def load_catalog(path: str | Path) -> tuple[ToolCatalog | None, list[ParseIssue]]:
    """Read a catalog file (OpenAI function list, Anthropic tool list, or ``{"tools": [...]}``)."""
    return read_catalog_file(path, "trace")


@contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    """Loading allocates millions of acyclic objects that the cyclic collector would rescan."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def load(
    paths: Iterable[str | Path],
    catalog: str | Path | None = None,
    max_result_chars: int | None = DEFAULT_MAX_RESULT_CHARS,
    root: str | Path | None = None,
) -> LoadResult:
    """Load every transcript under ``paths``; problems become issues, never exceptions.

    OpenAI-format trajectories get the tool catalog found beside them in the same folder,
    or ``catalog`` when it is given. Tool results longer than ``max_result_chars`` are cut
    to that length (``ToolResult.truncated_from`` keeps the full length); None keeps them whole.
    With a ``root`` (the app's data root), nothing outside it is read, links included: each
    path or file that leads outside is an issue.
    """
    loader = _Loader(max_result_chars, None if root is None else Path(root))
    files, issues = discover(paths, root)
    loader.result.issues.extend(issues)
    explicit = None
    if catalog is not None:
        explicit, catalog_issues = load_catalog(catalog)
        loader.result.issues.extend(catalog_issues)
        if explicit is not None:
            loader.result.catalogs.append(explicit)
    with _cyclic_gc_paused():
        for path, display in files:
            loader.load_file(path, display)
    loader.add_transcripts()
    loader.attach_catalogs(explicit)
    return loader.result
