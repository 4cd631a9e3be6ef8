"""Claude Code transcripts (``~/.claude/projects/**.jsonl``), current 2.1.x and older 1.0.x formats.

Both formats write one content block per line; the lines of one model response share a
``message.id`` and are grouped back into one assistant message here, which is where parallel
tool calls become visible. Subagent activity comes from ``<session>/subagents/agent-*.jsonl``
files, from ``agent_progress`` records when such a file is missing, or (1.0.x) from inline
``isSidechain`` records, and is attached to the tool call that spawned it.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NotRequired, TypedDict

import msgspec

from analysis._jsonio import iter_jsonl, timestamp, without_bom
from analysis.catalog import baseline_catalog
from analysis.ingest._context import ParseContext
from analysis.ingest._roots import OUTSIDE_REASON, inside_root

CONVERSATION_TYPES = frozenset({"user", "assistant"})
OTHER_TYPES = frozenset(
    {"progress", "file-history-snapshot", "queue-operation", "system", "summary", "result"}
)
SUBAGENTS_DIR = "subagents"

_COMMAND_NAME = re.compile(r"<command-name>(.*?)</command-name>", re.S)
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.S)
_LOCAL_COMMAND_MARKERS = (
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
)


class EventEntry(TypedDict):
    """A turn event (:class:`analysis.models.TurnEvent` once validated)."""

    kind: str
    text: str
    timestamp: str | None
    line: int | None


class CallEntry(TypedDict):
    """A tool call (:class:`analysis.models.ToolCall` once validated)."""

    id: str
    name: str
    input: dict[str, Any]
    result: dict[str, Any] | None
    """As :meth:`ParseContext.tool_result` makes it."""
    timestamp: str | None
    line: int
    subagent: SubagentEntry | None


class MessageEntry(TypedDict):
    """One model response, its content blocks joined (:class:`analysis.models.AssistantMessage`)."""

    id: str
    model: str | None
    text: str
    thinking: str
    tool_calls: list[CallEntry]
    usage: dict[str, int] | None
    """None until :meth:`ConversationBuilder.finish` reduces the last block's raw usage."""
    timestamp: str | None


class TurnEntry(TypedDict):
    """One turn (:class:`analysis.models.Turn` once validated)."""

    index: int
    ask: str
    command: str | None
    timestamp: str | None
    line: int
    agent_version: str | None
    catalog_index: int | None
    messages: list[MessageEntry]
    events: list[EventEntry]
    expanded_prompt: NotRequired[str]
    """The prompt a slash command expanded to, on that command's turn."""


class SubagentEntry(TypedDict):
    """A subagent run (:class:`analysis.models.SubagentRun` once validated)."""

    agent_id: str | None
    source: str
    prompt: str
    messages: list[MessageEntry]


class CatalogToolEntry(TypedDict):
    name: str
    description: str | None
    parameters: dict[str, Any]
    provenance: str


class CatalogEntry(TypedDict):
    """The tool list of a stream-json ``init`` record (:class:`analysis.models.ToolCatalog`)."""

    tools: list[CatalogToolEntry]
    source: str
    captured_at: str | None


class ToolUseResult(msgspec.Struct):
    """Of a tool result record's ``toolUseResult`` (a copy of the output), only the agent id."""

    agentId: Any = None


class ProgressData(msgspec.Struct):
    type: Any = None
    message: Any = None
    agentId: Any = None


class Record(msgspec.Struct, kw_only=True):
    """The fields of a transcript line that the workbench reads; everything else is skipped
    by the decoder without being turned into Python objects (``progress`` output,
    ``toolUseResult`` copies of whole files, snapshots), which is most of a transcript."""

    type: Any = None
    uuid: Any = None
    parentUuid: Any = None
    sessionId: Any = None
    version: Any = None
    cwd: Any = None
    gitBranch: Any = None
    timestamp: Any = None
    isSidechain: Any = None
    isMeta: Any = None
    isCompactSummary: Any = None
    message: Any = None
    subtype: Any = None
    content: Any = None
    operation: Any = None
    compactMetadata: Any = None
    summary: Any = None
    data: ProgressData | None = None
    parentToolUseID: Any = None
    toolUseResult: ToolUseResult | str | list[Any] | int | float | bool | None = None
    # stream-json output (claude -p --output-format stream-json) spells some fields otherwise
    session_id: Any = None
    parent_tool_use_id: Any = None
    tools: Any = None
    mcp_servers: Any = None


_decode_record = msgspec.json.Decoder(Record).decode


def looks_like_claude_code(record: Any) -> bool:
    if not isinstance(record, dict):
        return False
    kind = record.get("type")
    if kind == "summary" and "leafUuid" in record:
        return True
    return kind in CONVERSATION_TYPES | OTHER_TYPES and (
        "sessionId" in record or "session_id" in record or "uuid" in record or "messageId" in record
    )


def result_text(content: Any) -> str:
    """Flatten a ``tool_result`` content (a string or an array of blocks) to text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif isinstance(block, dict):
                parts.append(f"[{block.get('type', 'block')}]")
            else:
                parts.append(str(block))
        return "\n".join(parts)
    return str(content)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif block.get("type") == "image":
                parts.append("[image]")
        return "\n".join(parts)
    return ""


def _join(existing: str, addition: str) -> str:
    addition = addition.strip()
    if not addition:
        return existing
    return f"{existing}\n\n{addition}" if existing else addition


def _usage(raw: Any) -> dict[str, int] | None:
    if not isinstance(raw, dict):
        return None
    keys = (
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    )
    return {key: raw[key] for key in keys if isinstance(raw.get(key), int)}


def _classify_user_text(text: str) -> str:
    """What a user text message is: a turn, a slash command, or an event of some kind."""
    stripped = text.lstrip()
    if stripped.startswith("[Request interrupted"):
        return "interrupt"
    if stripped.startswith("<task-notification>"):
        return "background_task"
    if stripped.startswith(_LOCAL_COMMAND_MARKERS):
        return "local_command"
    if "<command-name>" in stripped[:400]:
        return "command"
    return "turn"


class ConversationBuilder:
    """Turns a stream of user/assistant/system records into turns, as typed dicts.

    The dicts (:class:`TurnEntry` and what it holds) are validated into models once per
    session, which is much faster than building a model per record. A record whose ``uuid``
    was already seen is skipped, and a response written again under new uuids (same
    ``message.id``) adds no message, call or text.
    """

    def __init__(self, context: ParseContext) -> None:
        self.context = context
        self.turns: list[TurnEntry] = []
        self.ask_uuids: list[str | None] = []
        """The uuid of the user record that opened each turn, in turn order."""
        self.calls: dict[str, CallEntry] = {}
        """Every tool call by id, for pairing results and attaching subagents."""
        self.messages: dict[Hashable, MessageEntry] = {}
        """Every response by ``message.id`` (else record uuid, else file:line)."""
        self.agent_ids: dict[str, str] = {}
        """Call id to the id of the subagent it spawned, from its result's ``toolUseResult``."""
        self.catalogs: list[CatalogEntry] = []
        self._raw_usage: dict[Hashable, Any] = {}
        """The last block's ``usage`` of each response, reduced by :meth:`finish`."""
        self._seen_uuids: dict[str, tuple[int, tuple[Any, ...]]] = {}
        """Each record uuid: the line that first carried it and that record's fingerprint."""
        self._seen_texts: set[tuple[str, str, str]] = set()
        self._command_uuid: str | None = None
        self._manual_compaction: list[EventEntry] = []

    def finish(self) -> list[TurnEntry]:
        """The turns, with each message's raw usage reduced to the token counts we keep."""
        self._settle_manual_compaction()
        for key, entry in self.messages.items():
            entry["usage"] = _usage(self._raw_usage.get(key))
        return self.turns

    # -- records -----------------------------------------------------------------------------

    def add(self, line: int, record: Record) -> None:
        uuid = record.uuid
        if isinstance(uuid, str):
            seen = self._seen_uuids.get(uuid)
            message = record.message
            fingerprint = (
                record.type,
                record.timestamp,
                message.get("id") if isinstance(message, dict) else None,
            )
            if seen is not None:
                if seen[1] == fingerprint:
                    return  # the same record written twice
                self.context.issue(
                    line, f"record reuses uuid {uuid} of line {seen[0]} with other content; kept"
                )
            else:
                self._seen_uuids[uuid] = (line, fingerprint)
        kind = record.type
        if kind in CONVERSATION_TYPES:
            message = record.message
            if not isinstance(message, dict):
                self.context.issue(line, f"'{kind}' record without a message object; skipped")
                return
            if kind == "user":
                self._add_user(line, record, message)
            else:
                self._add_assistant(line, record, message)
        elif kind == "system":
            self._add_system(line, record)
        elif kind == "queue-operation":
            content = record.content
            # Task notifications arrive again as user records; keep only what a person typed.
            if (
                record.operation == "enqueue"
                and isinstance(content, str)
                and not content.lstrip().startswith("<task-notification>")
            ):
                self._event("queued_message", content, record, line)

    def _current_turn(self, line: int, record: Record) -> TurnEntry:
        if not self.turns:
            self._new_turn("", None, record, line)
        return self.turns[-1]

    def _new_turn(self, ask: str, command: str | None, record: Record, line: int) -> None:
        events: list[EventEntry] = []
        if command == "/compact":
            events, self._manual_compaction = self._manual_compaction, []
        else:
            self._settle_manual_compaction()
        self.turns.append(
            {
                "index": len(self.turns),
                "ask": ask,
                "command": command,
                "timestamp": timestamp(record.timestamp),
                "line": line,
                "agent_version": record.version if isinstance(record.version, str) else None,
                "catalog_index": len(self.catalogs) - 1 if self.catalogs else None,
                "messages": [],
                "events": events,
            }
        )
        uuid = record.uuid
        self.ask_uuids.append(uuid if record.type == "user" and isinstance(uuid, str) else None)

    def _event(self, kind: str, text: str, record: Record, line: int) -> None:
        self._current_turn(line, record)["events"].append(_event_entry(kind, text, record, line))

    def _compaction(self, text: str, record: Record, line: int, manual: bool) -> None:
        """A manual compaction is written before its ``/compact`` command record (boundary,
        summary, caveat, command, output): it is held for that command's turn."""
        if manual or self._manual_compaction:
            self._manual_compaction.append(_event_entry("compaction", text, record, line))
        else:
            self._event("compaction", text, record, line)

    def _settle_manual_compaction(self) -> None:
        """No ``/compact`` turn came: the held compaction stays in the turn it arrived in."""
        if self._manual_compaction:
            held, self._manual_compaction = self._manual_compaction, []
            first_line = held[0]["line"]
            assert first_line is not None  # every held entry is a record's
            self._current_turn(first_line, Record())["events"].extend(held)

    # -- user --------------------------------------------------------------------------------

    def _add_user(self, line: int, record: Record, message: dict[str, Any]) -> None:
        """Classify a user record, in this order (the first that applies wins):

        1. content neither text nor a list of blocks: an issue, and the record is skipped;
        2. ``tool_result`` blocks: each is paired with its call; any text beside them is a
           ``user_interjection`` event, and nothing else is done;
        3. ``isCompactSummary``: the compaction summary, a ``compaction`` event;
        4. the text, by :func:`_classify_user_text` (interrupt, background_task, local_command,
           command, else turn), then:
           a. a turn-like text whose parent is the last slash command's record, before that
              command's turn has a response: the prompt the command expanded to
              (``expanded_prompt`` of that turn; such records are usually ``isMeta``);
           b. any other ``isMeta`` record: dropped;
           c. turn: a new turn; command: a new turn named by the command; anything else: an
              event of that kind in the current turn.
        """
        content = message.get("content")
        if not isinstance(content, str | list):  # 1.
            self.context.issue(
                line, "user message content is neither text nor a list of blocks; skipped"
            )
            return
        has_results = False
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    has_results = True
                    self._pair_result(line, record, block)
        text = _text_of(content)
        if has_results:  # 2.
            if text.strip():
                self._event("user_interjection", text, record, line)
            return
        if record.isCompactSummary:  # 3.
            self._compaction(text, record, line, manual=False)
            return
        kind = _classify_user_text(text)  # 4.
        if kind == "turn" and self._is_command_expansion(record):  # 4a.
            self.turns[-1]["expanded_prompt"] = text
            return
        if record.isMeta:  # 4b.
            return
        if kind == "turn":  # 4c.
            self._command_uuid = None
            self._new_turn(text, None, record, line)
        elif kind == "command":
            self._add_command(text, record, line)
        else:
            self._event(kind, text, record, line)

    def _add_command(self, text: str, record: Record, line: int) -> None:
        name_match = _COMMAND_NAME.search(text)
        args_match = _COMMAND_ARGS.search(text)
        name = name_match.group(1).strip() if name_match else text.strip()
        args = args_match.group(1).strip() if args_match else ""
        self._new_turn(f"{name} {args}".strip(), name, record, line)
        uuid = record.uuid
        self._command_uuid = uuid if isinstance(uuid, str) else None

    def _is_command_expansion(self, record: Record) -> bool:
        """The prompt a slash command expands to: a user message whose parent is the command."""
        return (
            self._command_uuid is not None
            and record.parentUuid == self._command_uuid
            and not self.turns[-1]["messages"]
        )

    def _pair_result(self, line: int, record: Record, block: dict[str, Any]) -> None:
        call_id = block.get("tool_use_id")
        call = self.calls.get(call_id) if isinstance(call_id, str) else None
        if call is None:
            self.context.issue(line, f"tool result for a call not in this transcript ({call_id!r})")
            return
        call["result"] = self.context.tool_result(
            result_text(block.get("content")), block.get("is_error") is True
        )
        extra = record.toolUseResult
        if isinstance(extra, ToolUseResult) and isinstance(extra.agentId, str):
            self.agent_ids[call["id"]] = extra.agentId

    # -- assistant ---------------------------------------------------------------------------

    def _add_assistant(self, line: int, record: Record, message: dict[str, Any]) -> None:
        self._settle_manual_compaction()
        # Named by file and line when it has no id, so it matches no other file's response.
        message_id = message.get("id") or record.uuid or f"{self.context.file}:{line}"
        entry = self.messages.get(message_id)
        if entry is None:
            model = message.get("model")
            entry = {
                "id": str(message_id),
                "model": model if isinstance(model, str) else None,
                "text": "",
                "thinking": "",
                "tool_calls": [],
                "usage": None,
                "timestamp": timestamp(record.timestamp),
            }
            self.messages[message_id] = entry
            self._current_turn(line, record)["messages"].append(entry)
        usage = message.get("usage")
        if usage is not None:
            self._raw_usage[message_id] = usage  # the last block's is the message's; finish()
        content = message.get("content")
        if isinstance(content, str):
            entry["text"] = _join(entry["text"], content)
            return
        if not isinstance(content, list):
            self.context.issue(
                line, "assistant message content is neither text nor a list of blocks"
            )
            return
        for block in content:
            if isinstance(block, dict):
                self._add_block(line, record, entry, block)

    def _add_block(
        self, line: int, record: Record, entry: MessageEntry, block: dict[str, Any]
    ) -> None:
        kind = block.get("type")
        if kind == "text" or kind == "thinking":
            value = str(block.get(kind, ""))
            seen = (entry["id"], kind, value)
            if seen not in self._seen_texts:  # the same block written again adds nothing
                self._seen_texts.add(seen)
                if kind == "text":
                    entry["text"] = _join(entry["text"], value)
                else:
                    entry["thinking"] = _join(entry["thinking"], value)
        elif kind == "tool_use":
            call_id, name = block.get("id"), block.get("name")
            if not isinstance(call_id, str) or not isinstance(name, str):
                self.context.issue(line, "tool_use block without a string id and name; skipped")
                return
            if call_id in self.calls:
                return
            arguments = block.get("input")
            if not isinstance(arguments, dict):
                self.context.issue(
                    line, f"tool_use {call_id} input is not an object; kept as 'value'"
                )
                arguments = {"value": arguments}
            call: CallEntry = {
                "id": call_id,
                "name": name,
                "input": arguments,
                "result": None,
                "timestamp": timestamp(record.timestamp),
                "line": line,
                "subagent": None,
            }
            self.calls[call_id] = call
            entry["tool_calls"].append(call)

    # -- system ------------------------------------------------------------------------------

    def _add_system(self, line: int, record: Record) -> None:
        subtype = record.subtype
        if subtype == "compact_boundary":
            meta = record.compactMetadata
            detail = ""
            manual = False
            if isinstance(meta, dict):
                detail = f" (trigger: {meta.get('trigger')}, {meta.get('preTokens')} tokens before)"
                manual = meta.get("trigger") == "manual"
            self._compaction(f"Conversation compacted{detail}", record, line, manual)
        elif subtype == "init" and isinstance(record.tools, list):
            self.catalogs.append(_init_catalog(record, line, self.context))
        elif subtype == "local_command" and self.turns:
            self._event("local_command", str(record.content or ""), record, line)


def _event_entry(kind: str, text: str, record: Record, line: int) -> EventEntry:
    return {"kind": kind, "text": text, "timestamp": timestamp(record.timestamp), "line": line}


def _init_catalog(record: Record, line: int, context: ParseContext) -> CatalogEntry:
    """The tool list of a stream-json ``system``/``init`` record, described from the baseline
    where the names match (the record carries names only)."""
    baseline = {tool.name: tool for tool in baseline_catalog().tools}
    tools: list[CatalogToolEntry] = []
    for name in record.tools:
        if not isinstance(name, str):
            context.issue(line, "init record lists a tool that is not a name; skipped")
            continue
        known = baseline.get(name)
        tools.append(
            {
                "name": name,
                "description": known.description if known else None,
                "parameters": known.parameters if known else {},
                "provenance": "trace",
            }
        )
    servers = [s.get("name") for s in record.mcp_servers or [] if isinstance(s, dict)]
    source = f"{context.file}:{line} (init; MCP servers: {', '.join(map(str, servers)) or 'none'})"
    return {"tools": tools, "source": source, "captured_at": timestamp(record.timestamp)}


def build_subagent(
    records: list[tuple[int, Record]],
    source: str,
    agent_id: str | None,
    context: ParseContext,
) -> SubagentEntry:
    builder = ConversationBuilder(context)
    for line, record in records:
        builder.add(line, record)
    turns = builder.finish()
    prompt = turns[0]["ask"] if turns else ""
    messages = [message for turn in turns for message in turn["messages"]]
    return {"agent_id": agent_id, "source": source, "prompt": prompt, "messages": messages}


def _sidechain_groups(
    sidechain: list[tuple[int, Record]],
) -> list[list[tuple[int, Record]]]:
    """Split inline 1.0.x sidechain records into one group per subagent run (by root)."""
    parents = {r.uuid: r.parentUuid for _, r in sidechain if r.uuid}
    roots: dict[Any, Any] = {}
    """Each uuid whose walk up ended at a record with no parent in the sidechain: that root."""

    def root(uuid: Any) -> Any:
        seen = set()
        walked = []
        while parents.get(uuid) in parents and uuid not in seen:
            known = roots.get(uuid)
            if known is not None:  # the rest of the walk was done before, and ended at a root
                uuid = known
                break
            seen.add(uuid)
            walked.append(uuid)
            uuid = parents[uuid]
        else:
            if uuid in seen:  # a cycle: where the walk stops depends on where it began
                return uuid
        for step in walked:
            roots[step] = uuid
        return uuid

    groups: dict[Any, list[tuple[int, Record]]] = defaultdict(list)
    for line, record in sidechain:
        groups[root(record.uuid)].append((line, record))
    return list(groups.values())


def _progress_record(data: ProgressData, record: Record) -> Record | None:
    """The subagent message inside an ``agent_progress`` record, shaped like a transcript line."""
    inner = data.message
    if not isinstance(inner, dict):
        return None
    return Record(
        type=inner.get("type"),
        message=inner.get("message"),
        uuid=inner.get("uuid"),
        timestamp=inner.get("timestamp") or record.timestamp,
    )


class _FileParts:
    """One transcript file's records sorted by what they are for."""

    def __init__(self) -> None:
        self.main: list[tuple[int, Record]] = []
        self.sidechain: list[tuple[int, Record]] = []
        self.progress: dict[str, list[tuple[int, Record]]] = defaultdict(list)
        self.progress_agent: dict[str, str] = {}
        self.summaries: list[str] = []
        self.session_ids: Counter[str] = Counter()
        self.versions: Counter[str] = Counter()
        self.cwd: str | None = None
        self.git_branch: str | None = None

    def note_origin(self, record: Record) -> None:
        """Count session ids and versions; the most common ones name the session."""
        session_id = record.sessionId if record.sessionId is not None else record.session_id
        if isinstance(session_id, str):
            self.session_ids[session_id] += 1
        if isinstance(record.version, str):
            self.versions[record.version] += 1
        if self.cwd is None and isinstance(record.cwd, str):
            self.cwd = record.cwd
        if self.git_branch is None and isinstance(record.gitBranch, str):
            self.git_branch = record.gitBranch


def _sort_record(line: int, record: Record, parts: _FileParts, context: ParseContext) -> bool:
    """File a record where it belongs; True when it is main-chain conversation."""
    kind = record.type
    if kind == "progress":
        _sort_progress(line, record, parts)
        return False
    if kind not in CONVERSATION_TYPES and kind not in OTHER_TYPES:
        context.issue(line, f"unknown record type {kind!r}")
        return False
    if kind == "summary":
        if isinstance(record.summary, str):
            parts.summaries.append(record.summary)
        return False
    parts.note_origin(record)
    if isinstance(record.parent_tool_use_id, str):  # a subagent's message in stream-json
        parts.progress[record.parent_tool_use_id].append((line, record))
        return False
    if record.isSidechain is True:
        parts.sidechain.append((line, record))
    else:
        return True
    return False


def _sort_progress(line: int, record: Record, parts: _FileParts) -> None:
    data = record.data
    parent = record.parentToolUseID
    if data is None or data.type != "agent_progress" or not isinstance(parent, str):
        return
    normalized = _progress_record(data, record)
    if normalized is None:
        return
    parts.progress[parent].append((line, normalized))
    if isinstance(data.agentId, str):
        parts.progress_agent[parent] = data.agentId


def read_transcript(
    data: bytes, context: ParseContext, builder: ConversationBuilder | None = None
) -> _FileParts:
    """Stream a transcript's records: main-chain conversation straight into ``builder``
    (everything, when it is None, is kept in the parts), the rest sorted into parts.

    Each line is decoded into a :class:`Record`; what it does not name is skipped unread.
    """
    parts = _FileParts()
    lines = iter_jsonl(data, context.file, context.issues, _decode_record)
    for line, record in lines:
        if _sort_record(line, record, parts, context):
            if builder is not None:
                builder.add(line, record)
            else:
                parts.main.append((line, record))
    return parts


def _subagent_files(path: Path, context: ParseContext) -> list[Path]:
    """The session's subagent files; one that leads outside the data root is an issue."""
    folder = path.with_suffix("") / SUBAGENTS_DIR
    files = sorted(file for file in folder.glob("agent-*.jsonl") if file.is_file())
    if context.root is None:
        return files
    for file in files:
        if not inside_root(file, context.root):
            context.for_file(_display(file, path, context.file)).issue(None, OUTSIDE_REASON)
    return [file for file in files if inside_root(file, context.root)]


def _display(child: Path, parent: Path, parent_display: str) -> str:
    try:
        relative = child.relative_to(parent.parent)
    except ValueError:
        return str(child)
    return str(Path(parent_display).parent / relative)


def _load_subagent_files(
    path: Path, files: list[Path], context: ParseContext
) -> dict[str, SubagentEntry]:
    runs: dict[str, SubagentEntry] = {}
    for file in files:
        file_context = context.for_file(_display(file, path, context.file))
        try:
            data = without_bom(file.read_bytes())
        except OSError as error:
            file_context.issue(None, f"cannot be read ({error.strerror})")
            continue
        parts = read_transcript(data, file_context)
        agent_id = file.stem.removeprefix("agent-")
        conversation = sorted(parts.main + parts.sidechain, key=lambda item: item[0])
        runs[agent_id] = build_subagent(conversation, "file", agent_id, file_context)
    return runs


def _attach_subagents(
    builder: ConversationBuilder,
    parts: _FileParts,
    file_runs: dict[str, SubagentEntry],
    context: ParseContext,
) -> list[SubagentEntry]:
    """Give each spawning call its subagent run; return the runs no call claims.

    A subagent's own file wins over its ``agent_progress`` copy, so nothing counts twice.
    """
    file_agent_ids = set(file_runs)
    unclaimed_sidechains = [
        build_subagent(group, "sidechain", None, context)
        for group in _sidechain_groups(parts.sidechain)
    ]
    for call_id, call in builder.calls.items():
        agent_id = builder.agent_ids.get(call_id) or parts.progress_agent.get(call_id)
        run: SubagentEntry | None = None
        if agent_id and agent_id in file_runs:
            run = file_runs.pop(agent_id)
        elif call_id in parts.progress:
            run = build_subagent(parts.progress[call_id], "progress", agent_id, context)
        else:
            prompt = str(call["input"].get("prompt") or "").strip()
            run = next(
                (s for s in unclaimed_sidechains if prompt and s["prompt"].strip() == prompt), None
            )
            if run is not None:
                unclaimed_sidechains.remove(run)
        if run is not None:
            call["subagent"] = run
        parts.progress.pop(call_id, None)
    detached = list(file_runs.values()) + unclaimed_sidechains
    for call_id, records in parts.progress.items():
        agent_id = parts.progress_agent.get(call_id)
        if agent_id not in file_agent_ids:
            detached.append(build_subagent(records, "progress", agent_id, context))
    return detached


@dataclass
class ParsedTranscript:
    """What one Claude Code transcript file gave."""

    session: dict[str, Any] | None
    """The session, as a dict ready for validation; None when the file holds no conversation."""
    ask_uuids: list[str | None]
    """The uuid of the user record that opened each of the session's turns, in turn order."""
    subagent_files_read: int


def parse_claude_code(path: Path, data: bytes, context: ParseContext) -> ParsedTranscript:
    """Build one session from a transcript file's bytes and its subagents' files."""
    builder = ConversationBuilder(context)
    parts = read_transcript(data, context, builder)
    files = _subagent_files(path, context)
    file_runs = _load_subagent_files(path, files, context)
    detached = _attach_subagents(builder, parts, file_runs, context)
    if not builder.turns and not detached:
        return ParsedTranscript(None, [], len(files))
    version = parts.versions.most_common(1)[0][0] if parts.versions else None
    legacy = bool(parts.summaries) or (isinstance(version, str) and version.startswith("1."))
    session_id = parts.session_ids.most_common(1)[0][0] if parts.session_ids else path.stem
    session = {
        "session_id": session_id,
        "source": context.file,
        "format": "claude-code-legacy" if legacy else "claude-code",
        "title": parts.summaries[0] if parts.summaries else None,
        "cwd": parts.cwd,
        "git_branch": parts.git_branch or None,
        "agent_version": version,
        "turns": builder.finish(),
        "catalogs": builder.catalogs,
        "detached_subagents": detached,
        "issues": [issue.model_dump() for issue in context.issues],
    }
    return ParsedTranscript(session, builder.ask_uuids, len(files))
