"""The data model every part of the workbench speaks: sessions, turns, tool calls, catalogs."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt

SessionFormat = Literal["claude-code", "claude-code-legacy", "codex", "openai", "otlp"]
Provenance = Literal["baseline", "live", "trace", "version", "snapshot", "observed"]
CatalogBasis = Literal[
    "trace",
    "baseline",
    "baseline+live",
    "version",
    "version+live",
    "version+observed",
    "version+live+observed",
    "version+snapshot",
    "version+live+snapshot",
    "version+snapshot+observed",
    "version+live+snapshot+observed",
]
SubagentSource = Literal["file", "progress", "sidechain"]
Condition = Literal["bare", "catalog_no_call", "full"]  # the ablation order: least context first
JudgeUnit = Literal["step", "turn"]
Rater = Literal["judge", "scorer"]
EventKind = Literal[
    "background_task",
    "queued_message",
    "interrupt",
    "compaction",
    "local_command",
    "user_interjection",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ParseIssue(_Model):
    """Something in an input file that could not be used; the rest of the file still loads."""

    file: str
    line: int | None = None
    reason: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: {self.reason}"


class ToolDef(_Model):
    """One tool on the menu the agent chose from."""

    name: str
    description: str | None = None
    """What the judge reads about the tool."""
    parameters: dict[str, Any] = Field(default_factory=dict)
    provenance: Provenance = "trace"
    since: str | None = None
    """An agent's built-in: the first version known to ship this definition..."""
    until: str | None = None
    """...and the last (None: still current)."""
    vendor_description: str | None = None
    """An agent's built-in: the agent's own description (Claude Code's, Codex's), shown beside
    the judge's."""
    denied_by: str | None = None
    """The permission rule that took the tool out of the agent's use when the session started
    (``WebFetch``, ``mcp__github``): on the menu, marked unavailable."""


class ToolCatalog(_Model):
    """The tools available to the agent, and where and when that list was captured."""

    tools: list[ToolDef] = Field(default_factory=list)
    source: str | None = None
    captured_at: datetime | None = None
    exported_basis: CatalogBasis | None = None
    """For a menu read back from our own export: what it was judged as before (a baseline
    menu stays ``baseline``), so a round trip keeps every step's catalog basis."""

    def names(self) -> list[str]:
        return [tool.name for tool in self.tools]

    def get(self, name: str) -> ToolDef | None:
        return next((tool for tool in self.tools if tool.name == name), None)


class McpServer(_Model):
    """An MCP server configured for the session's folder when it started."""

    name: str
    scope: Literal["user", "local", "project"]
    file: str
    """The settings file that configures it (``~/.claude.json``, ``.mcp.json``)."""


class MenuSnapshot(_Model):
    """What decided a Claude Code session's menu when it started, read without the model by
    the ``SessionStart`` hook: its MCP servers and the permission rules."""

    recorded_at: datetime
    source: str
    """How the session started: ``startup``, ``resume``, ``clear`` or ``compact``."""
    mcp_servers: list[McpServer] = Field(default_factory=list)
    allow: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)
    read_from: list[str] = Field(default_factory=list)


class Usage(_Model):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_creation_input_tokens=self.cache_creation_input_tokens
            + other.cache_creation_input_tokens,
            cache_read_input_tokens=self.cache_read_input_tokens + other.cache_read_input_tokens,
        )


class ToolResult(_Model):
    content: str = ""
    is_error: bool = False
    truncated_from: int | None = None
    """Full length in characters when ``content`` was cut at load time."""


class ToolCall(_Model):
    id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)
    result: ToolResult | None = None
    timestamp: datetime | None = None
    line: int | None = None
    subagent: SubagentRun | None = None


class AssistantMessage(_Model):
    """One model response; parallel tool calls share one message."""

    id: str
    model: str | None = None
    text: str = ""
    thinking: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: Usage | None = None
    timestamp: datetime | None = None


class SubagentRun(_Model):
    """What a spawned subagent did, attached to the call that spawned it."""

    agent_id: str | None = None
    source: SubagentSource
    prompt: str = ""
    messages: list[AssistantMessage] = Field(default_factory=list)

    def tool_calls(self) -> Iterator[ToolCall]:
        for message in self.messages:
            yield from message.tool_calls


class TurnEvent(_Model):
    """Something that happened during a turn that is not a turn of its own."""

    kind: EventKind
    text: str = ""
    timestamp: datetime | None = None
    line: int | None = None


class Turn(_Model):
    """One message the human typed, plus everything the agent did until the next one."""

    index: int
    ask: str
    command: str | None = None
    expanded_prompt: str | None = None
    timestamp: datetime | None = None
    line: int | None = None
    agent_version: str | None = None
    """The agent's version as the record of the ask gives it (Claude Code writes its own)."""
    catalog_index: int | None = None
    """Which of the session's trace-time ``catalogs`` the agent had at this turn."""
    messages: list[AssistantMessage] = Field(default_factory=list)
    events: list[TurnEvent] = Field(default_factory=list)

    def tool_calls(self) -> Iterator[ToolCall]:
        for message in self.messages:
            yield from message.tool_calls

    def subagent_tool_calls(self) -> Iterator[ToolCall]:
        for call in self.tool_calls():
            if call.subagent is not None:
                yield from call.subagent.tool_calls()


class Session(_Model):
    session_id: str
    source: str
    format: SessionFormat
    title: str | None = None
    cwd: str | None = None
    git_branch: str | None = None
    agent_version: str | None = None
    system_prompt: str | None = None
    catalogs: list[ToolCatalog] = Field(default_factory=list)
    """Tool catalogs the input itself carried, in the order they were captured."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    menu_snapshot: MenuSnapshot | None = None
    """A Claude Code session the registry recorded: its menu snapshot at session start."""
    thread_id: str | None = None
    """The registry's thread: the first session of the chain of resumes this one continues
    (its own id when it resumed none); None for a session the registry does not know."""
    turns: list[Turn] = Field(default_factory=list)
    detached_subagents: list[SubagentRun] = Field(default_factory=list)
    issues: list[ParseIssue] = Field(default_factory=list)

    def tool_calls(self) -> Iterator[ToolCall]:
        for turn in self.turns:
            yield from turn.tool_calls()

    def catalog_for(self, turn: Turn) -> ToolCatalog | None:
        """The catalog the input says the agent had at ``turn``, if it says."""
        if turn.catalog_index is None or turn.catalog_index >= len(self.catalogs):
            return None
        return self.catalogs[turn.catalog_index]

    def attach_catalog(self, catalog: ToolCatalog) -> None:
        """Give every turn that has no trace-time catalog this one."""
        self.catalogs.append(catalog)
        for turn in self.turns:
            if turn.catalog_index is None:
                turn.catalog_index = len(self.catalogs) - 1

    def subagent_tool_calls(self) -> Iterator[ToolCall]:
        for turn in self.turns:
            yield from turn.subagent_tool_calls()
        for run in self.detached_subagents:
            yield from run.tool_calls()

    def tool_call_counts(self) -> dict[str, int]:
        return dict(Counter(call.name for call in self.tool_calls()))

    def subagent_tool_call_counts(self) -> dict[str, int]:
        return dict(Counter(call.name for call in self.subagent_tool_calls()))

    def usage(self) -> Usage:
        total = Usage()
        for turn in self.turns:
            for message in turn.messages:
                if message.usage is not None:
                    total = total + message.usage
        return total

    def models(self) -> list[str]:
        seen = dict.fromkeys(
            message.model for turn in self.turns for message in turn.messages if message.model
        )
        return list(seen)


Label = Literal["correct", "incorrect"]
"""A step's tool choice as one vote, one person or a score's majority says it."""


@dataclass(frozen=True)
class Step:
    """One model response of a turn (or of a subagent run spawned in it): the unit that chose a
    tool. ``analysis.render.turn_steps`` lists a turn's steps."""

    turn: Turn
    index: int
    """Position among the responses of the turn, or of the subagent run (0-based)."""
    message: AssistantMessage
    parent_call: ToolCall | None = None
    """For a subagent's step: the call that spawned the subagent."""

    @property
    def message_id(self) -> str:
        return self.message.id

    @property
    def parent_call_id(self) -> str | None:
        return self.parent_call.id if self.parent_call is not None else None

    @property
    def calls_tools(self) -> bool:
        return bool(self.message.tool_calls)


CORRECT: Final = "correct"
INCORRECT: Final = "incorrect"
MAJORITY = 0.5
"""A score (the fraction of valid votes ``correct``) at or above this is a ``correct``
majority: an even split counts as correct."""


def majority_label(score: float) -> Label:
    """The label of a score, the one rule from a score to a label everywhere (a vote made from
    another platform's score, the judge's label against people's, a changed verdict, the
    review queue, :func:`verdict_of`): :data:`CORRECT` at :data:`MAJORITY` and above (an even
    split included), else :data:`INCORRECT`."""
    return CORRECT if score >= MAJORITY else INCORRECT


class Vote(_Model):
    verdict: Label
    reasoning: str


STEP_KEYS = ["session_id", "turn_index", "step_index", "parent_call_id"]
"""What addresses a step (with ``step_item_id``'s rule for its label item): a turn judged whole
has no step index, a main agent's step no parent call."""
StepKey = tuple[str, int, int | None, str | None]
"""A step's :data:`STEP_KEYS` values, in that order."""


_ESCAPES = re.compile("%(25|3A)")
"""What :func:`step_item_id` writes for a ``%`` and a ``:`` of a session id."""
_COUNT = re.compile("0|[1-9][0-9]*")
"""A turn or step index as an item id writes it: ASCII digits, no leading zero."""


def step_item_id(
    session_id: str,
    turn_index: int,
    step_index: int | None = None,
    parent_call_id: str | None = None,
) -> str:
    """The label item of a step: ``SESSION:TURN:STEP``, with ``:CALL`` for a subagent's step
    (``CALL`` the call that spawned it; an empty one is none), or ``SESSION:TURN`` for a turn
    judged whole (which has no call). ``SESSION`` is the session id with each ``%`` written
    ``%25`` and each ``:`` written ``%3A`` (an id with neither, a UUID, is written as it is),
    so that the first ``:`` ends it whatever the session id holds, and the call, last, may hold
    ``:`` too: :func:`parse_step_item_id` gives the parts back."""
    session = session_id.replace("%", "%25").replace(":", "%3A")
    if step_index is None:
        return f"{session}:{turn_index}"
    call = f":{parent_call_id}" if parent_call_id else ""
    return f"{session}:{turn_index}:{step_index}{call}"


def item_session_id(item_id: str) -> str:
    """The session id of a label item (:func:`step_item_id`): what comes before its first
    ``:``, ``%25`` and ``%3A`` read back as ``%`` and ``:``. Never refuses a text: any other
    ``%`` is kept as it stands."""
    session = item_id.partition(":")[0]
    return _ESCAPES.sub(lambda escape: "%" if escape[1] == "25" else ":", session)


def parse_step_item_id(item_id: str) -> StepKey:
    """The step a label item names, as :data:`STEP_KEYS` values: the exact inverse of
    :func:`step_item_id` (a turn judged whole has step and call None, a main agent's step
    call None). Raises ValueError, in one sentence, for a text no step's item id can be."""
    _, colon, rest = item_id.partition(":")
    parts = rest.split(":", 2)
    if not colon or not all(_COUNT.fullmatch(part) for part in parts[:2]) or parts[2:] == [""]:
        raise ValueError(
            f"{item_id!r} is not a step's item id "
            "(SESSION:TURN, SESSION:TURN:STEP or SESSION:TURN:STEP:CALL)"
        )
    step = int(parts[1]) if len(parts) > 1 else None
    return item_session_id(item_id), int(parts[0]), step, parts[2] if len(parts) > 2 else None


Verdict = Literal["correct", "incorrect", "split", "unscored"]
"""What a ChainPoll score says, in the words every page, command and export use."""


CASCADE_PREFIX = "cascade:"
"""How a cascade's ``judge_id`` starts (``analysis.judge.cascade_id``)."""


def verdict_of(score: float | None, rater: str = "judge") -> Verdict:
    """``correct`` when every valid vote said so (score 1), ``incorrect`` when none did (0):
    then the verdict is the score's :func:`majority_label`; ``split`` between (the judges
    disagreed: ambiguous, worth a human look), ``unscored`` without one valid vote. A turn's
    TSQ is the mean of its judged steps' scores; a turn of steps each decided alike but not all
    the same is ``mixed``, which no step can be. A trained scorer's probability (``rater``
    ``scorer``) is no vote: its verdict is always its :func:`majority_label`."""
    if score is None:
        return "unscored"
    if 0 < score < 1 and rater != "scorer":
        return "split"
    return majority_label(score)


class JudgmentUsage(_Model):
    """The tokens a judgment's votes used, as the model's API counted them (every re-ask's
    included; none for votes that came from the vote cache)."""

    input_tokens: NonNegativeInt = 0
    """Uncached input tokens."""
    output_tokens: NonNegativeInt = 0
    cache_read_tokens: NonNegativeInt = 0
    cache_write_tokens: NonNegativeInt = 0


class Judgment(_Model):
    """One judged step (or whole turn): the contract of each line of ``tsq judge --out``.

    A step row names its turn, its ``step_index`` and ``message_id``; a subagent's step also
    names the call that spawned the subagent (``parent_call_id``). Turn-level rows, from
    ``--unit turn`` or from files written before steps existed, leave all three null.
    """

    session_id: str
    turn_index: NonNegativeInt
    step_index: NonNegativeInt | None = None
    message_id: str | None = None
    parent_call_id: str | None = None
    score: Annotated[float, Field(ge=0, le=1)] | None
    """The fraction of valid votes that said "correct"."""
    votes: list[Vote]
    n_requested: NonNegativeInt
    n_valid: NonNegativeInt
    n_discarded: NonNegativeInt
    model: str
    judge_id: str | None = None
    """The judge spec's ``name#hash`` (``analysis.judge.JudgeSpec.judge_id``); None in files
    written before specs existed. Judgments of different judges are never merged."""
    spec_name: str
    condition: Condition
    catalog_size: NonNegativeInt
    call_rendered: bool
    context_chars: NonNegativeInt
    step_chars: Annotated[int, Field(ge=2000)] | None = None
    """The budget the judge's input for a step was kept within (its spec's ``step_chars``), so
    that the input can be rendered again as the judge read it; None for a whole turn, and in
    files written before judgments recorded it."""
    unscored_reason: str | None = None
    usage: JudgmentUsage | None = None
    """The tokens its votes used in the run that wrote it; None in files written before
    judgments recorded it."""
    cost_usd: Annotated[float, Field(ge=0)] | None = None
    """What those tokens cost at the model's list price (half with ``--batch``); None when the
    model has no known price, and in files written before judgments recorded it."""
    rater: Rater = "judge"
    """Who scored the step: an LLM judge's votes (``judge``), or a trained step scorer
    (``scorer``: ``score`` is its probability that the choice was correct, there are no votes,
    and ``judge_id`` is the scorer's ``scorer_id``)."""
    via: str | None = None
    """In a cascade's judgment (``tsq judge --cascade``: ``judge_id`` is the cascade's, one
    rater for every view), which of the two gave it: the judge spec's ``judge_id`` whose votes
    these are (``rater`` ``judge``), or the trained scorer's ``scorer_id`` whose probability was
    kept (``rater`` ``scorer``). None elsewhere."""

    @property
    def unit(self) -> JudgeUnit:
        return "turn" if self.step_index is None else "step"

    @property
    def by_scorer(self) -> bool:
        """Whether a trained step scorer gave it as a rater of its own (not kept in a
        cascade): what is named a trained scorer beside its test agreement."""
        return self.rater == "scorer" and self.via is None

    @property
    def verdict(self) -> Verdict:
        """:func:`verdict_of` its score."""
        return verdict_of(self.score, self.rater)

    @property
    def item_id(self) -> str:
        """The label item this judgment is about (:func:`step_item_id`)."""
        return step_item_id(self.session_id, self.turn_index, self.step_index, self.parent_call_id)

    @property
    def key(self) -> tuple[str, int, int | None, str | None, str, str | None]:
        """What one judgment is about, and by which judge: one row per key counts (see
        ``merge_judgments``)."""
        return (
            self.session_id,
            self.turn_index,
            self.step_index,
            self.parent_call_id,
            self.condition,
            self.judge_id,
        )


class ScorerRecord(_Model):
    """A trained step scorer as the workbench names it beside its judgments (the index's
    ``scorers`` table, written by ``tsq score``): its measured agreement with people on the
    test part of its split, from its model card, and the folder it was loaded from."""

    scorer_id: str
    name: str
    test_n: int = 0
    test_agreement: float | None = None
    test_agreement_ci: tuple[float, float] | None = None
    folder: str | None = None
    """Where ``tsq score`` read it, on the machine that scored: what shows why a step scored
    what it did (its features' contributions)."""


class LoadResult(_Model):
    """Everything a load produced: sessions, catalogs found beside them, and file-level issues."""

    sessions: list[Session] = Field(default_factory=list)
    catalogs: list[ToolCatalog] = Field(default_factory=list)
    judgments: list[Judgment] = Field(default_factory=list)
    """Judge results found among the inputs (``tsq judge --out`` files)."""
    issues: list[ParseIssue] = Field(default_factory=list)
    files_read: int = 0

    def all_issues(self) -> list[ParseIssue]:
        return [*self.issues, *(issue for s in self.sessions for issue in s.issues)]


ToolCall.model_rebuild()
