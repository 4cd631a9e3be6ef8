"""What the step scorer reads of a step: parts of what the judge reads (the ask, the chosen calls,
the menu, the step before), and the tokens a linear model hashes from them.

Each part is made by the function the judge's renderer makes it with (``render_steps``,
``render_call``), so the scorer and the judge see one step alike; the index keeps every step's
features (``step_inputs.features``), so scoring a collection never reads a transcript again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from itertools import pairwise

from pydantic import BaseModel, ConfigDict

from analysis.models import Session, ToolCall, ToolDef
from analysis.render import JudgeInput, RenderOptions, render_call, render_steps, select_steps

FEATURE_SET_VERSION: int = 1
"""The version of :func:`feature_tokens`: a scorer trained on one refuses features of another."""
ASK_CHARS = 1000
"""The ask is cut to this many characters (its start)."""
ARGUMENT_CHARS = 200
"""Longer argument values of a call are cut (``analysis.render.render_call``): as the judge's
renderer cuts them by default, so that the index keeps the calls it renders."""


class StepFeatures(BaseModel):
    """One step that called tools, as the step scorer reads it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    session_id: str
    turn_index: int
    step_index: int
    parent_call_id: str | None = None
    """A subagent's step: the call that spawned the subagent."""
    message_id: str | None = None
    agent: str
    """The session's format (``claude-code``, ``claude-code-legacy``, ``codex``, ``openai``,
    ``otlp``): which agent, and which of its formats, wrote it."""
    agent_version: str | None = None
    """The version of the agent that wrote the step's turn (else the session's)."""
    ask: str
    """The request as the judge reads it (a subagent's: the prompt it was given), its first
    :data:`ASK_CHARS` characters."""
    calls: list[str]
    """The step's calls, rendered as the judge reads them."""
    call_tools: list[str]
    """The tools the step called, one per call."""
    menu: list[str]
    """The names of the tools on the step's menu, in the judge's order."""
    menu_sources: list[str]
    """Where each menu tool came from, one word per tool: ``mcp`` (an MCP server's tool),
    ``builtin`` (the agent's own), ``trace`` (the catalog the input carried), ``live`` (a live
    dump) or ``observed`` (known only from the session's calls)."""
    previous_calls: list[str] = []
    """The calls of the step before in the same run (the turn's, or the subagent's), rendered;
    none for a run's first step."""
    previous_errors: int = 0
    """How many of those calls had an error result."""
    repeated_call: bool = False
    """Whether the step repeats one of those calls: the same tool with the same input."""


_SOURCES: dict[str, str] = {
    "baseline": "builtin",
    "version": "builtin",
    "trace": "trace",
    "live": "live",
    "snapshot": "mcp",
    "observed": "observed",
}


def _menu_source(tool: ToolDef) -> str:
    """Where a menu tool came from (``StepFeatures.menu_sources``): an MCP server's tool is
    named ``mcp__SERVER__TOOL`` whatever its provenance."""
    return "mcp" if tool.name.startswith("mcp__") else _SOURCES[tool.provenance]


def step_features(
    session: Session, *, subagents: bool = True, rendered: Sequence[JudgeInput] = ()
) -> list[StepFeatures]:
    """The features of every step of ``session`` that called tools (the subagents' steps too
    with ``subagents``), in ``select_steps`` order.

    The steps of a run (a turn's, or a subagent's) are judged on one ask and one menu, so one
    step of each run is rendered (``render_steps``) for them. ``rendered``: the inputs of some
    of the steps that the caller has already, rendered with the default options (which cut
    arguments at :data:`ARGUMENT_CHARS`): those steps' runs need no other, and their calls
    are taken as rendered there."""
    steps = select_steps(session, "all", text_steps=False, subagents=subagents)
    given = {(unit.turn_index, unit.step_index, unit.parent_call_id): unit for unit in rendered}
    runs = {(unit.turn_index, unit.parent_call_id): unit for unit in rendered}
    firsts = {(step.turn.index, step.parent_call_id): step for step in reversed(steps)}
    unrendered = [step for run, step in firsts.items() if run not in runs]
    options = RenderOptions(argument_chars=ARGUMENT_CHARS)
    for step, unit in zip(
        unrendered, render_steps(session, unrendered, options=options), strict=True
    ):
        runs[step.turn.index, step.parent_call_id] = unit
    menus: dict[int, tuple[list[str], list[str]]] = {}  # a turn's steps share its menu
    before: dict[tuple[int, str | None], tuple[list[ToolCall], list[str]]] = {}
    features = []
    for step in steps:
        calls = step.message.tool_calls
        run = (step.turn.index, step.parent_call_id)
        own = given.get((step.turn.index, step.index, step.parent_call_id))
        rendered_calls = (
            own.rendered_calls if own else [render_call(call, ARGUMENT_CHARS) for call in calls]
        )
        previous, previous_rendered = before.get(run, ([], []))
        before[run] = (calls, rendered_calls)
        if step.turn.index not in menus:
            tools = runs[run].tools
            menus[step.turn.index] = (
                [tool.name for tool in tools],
                [_menu_source(tool) for tool in tools],
            )
        menu, sources = menus[step.turn.index]
        features.append(
            StepFeatures(
                session_id=session.session_id,
                turn_index=step.turn.index,
                step_index=step.index,
                parent_call_id=step.parent_call_id,
                message_id=step.message_id,
                agent=session.format,
                agent_version=step.turn.agent_version or session.agent_version,
                ask=runs[run].ask[:ASK_CHARS],
                calls=rendered_calls,
                call_tools=[call.name for call in calls],
                menu=menu,
                menu_sources=sources,
                previous_calls=previous_rendered,
                previous_errors=sum(bool(c.result and c.result.is_error) for c in previous),
                repeated_call=_repeats(calls, previous),
            )
        )
    return features


def _repeats(calls: list[ToolCall], previous: list[ToolCall]) -> bool:
    if not previous:
        return False
    done = [(call.name, call.input) for call in previous]
    return any((call.name, call.input) in done for call in calls)


_WORD = re.compile(r"\w+")
"""A token of text: a run of letters, digits and underscores (numbers kept), lowercased."""


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def feature_tokens(features: StepFeatures) -> list[str]:
    """The tokens a linear model hashes, each named by its part (a token repeats as often as
    it occurs: counts matter):

    - ``ask:WORD`` and ``ask:WORD_WORD`` (the ask's words and word pairs);
    - ``call:TOOL``; for a shell tool, also ``call:TOOL:PROGRAM`` for each program its command
      runs (``cd DIR && grep x | sort``: grep and sort; see :func:`shell_programs`);
    - ``arg:WORD``: the words of each call's rendered arguments;
    - ``menu:TOOL`` and ``menu_source:SOURCE`` for each tool on the menu;
    - ``call_with_menu:HEAD|TOOL``: each call's head (``TOOL:PROGRAM`` for each program of a
      shell command, else ``TOOL``) with each menu tool (a call to Bash running grep while the
      Grep tool is on the menu: ``call_with_menu:Bash:grep|Grep``);
    - ``prev:TOOL`` and ``prev:TOOL:PROGRAM`` for the step before's calls, ``prev_error`` for
      each of them that failed, ``repeat`` when the step repeats one of them;
    - ``agent:AGENT``, ``agent_version:MAJOR.MINOR``, and ``subagent`` for a subagent's step.

    Words are :data:`_WORD` matches, lowercased; tool names and programs keep their case as
    the calls give them.
    """
    words = _words(features.ask)
    tokens = [f"ask:{word}" for word in words]
    tokens += [f"ask:{first}_{second}" for first, second in pairwise(words)]
    heads = []
    for tool, call in zip(features.call_tools, features.calls, strict=True):
        programs = _shell_programs(tool, call)
        tokens.append(f"call:{tool}")
        tokens += [f"call:{tool}:{program}" for program in programs]
        tokens += [f"arg:{word}" for word in _words(_arguments(tool, call))]
        heads += [f"{tool}:{program}" for program in programs] or [tool]
    tokens += [f"menu:{name}" for name in features.menu]
    tokens += [f"menu_source:{source}" for source in features.menu_sources]
    tokens += [f"call_with_menu:{head}|{name}" for head in heads for name in features.menu]
    for call in features.previous_calls:
        tool = call.split("(", 1)[0]
        tokens.append(f"prev:{tool}")
        tokens += [f"prev:{tool}:{program}" for program in _shell_programs(tool, call)]
    tokens += ["prev_error"] * features.previous_errors
    tokens += ["repeat"] if features.repeated_call else []
    tokens.append(f"agent:{features.agent}")
    version = re.match(r"\d+(?:\.\d+)?", features.agent_version or "")
    tokens += [f"agent_version:{version.group()}"] if version else []
    tokens += ["subagent"] if features.parent_call_id is not None else []
    return tokens


def _arguments(tool: str, call: str) -> str:
    """A rendered call's arguments: ``Name(arguments)`` without its name and brackets."""
    return call[len(tool) + 1 : -1] if call.startswith(f"{tool}(") else call


_SHELL_HINTS = ("bash", "shell", "exec", "command", "terminal", "console")
"""A shell tool's name holds one of these (Claude Code's ``Bash``, Codex's ``shell``,
``shell_command`` and ``exec_command``, ``run_terminal_cmd``…) and it takes a command."""
_COMMAND = re.compile(r"(?:^|, )(?:command|cmd)=")
_CUT = re.compile(r"…\[\+\d+ chars\]")
_JSON_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"?')
"""A JSON string, or the start of one that was cut."""
_SHELL_PART = re.compile(
    r"""'[^']*'?|"(?:[^"\\]|\\.)*"?|\d*[<>]+&?[\d-]*|&&|\|\||[;|&\n()]|[^\s'"<>;|&()]+"""
)
"""A shell command's parts: quoted strings, redirections, operators and words."""
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1([^\n]*)\n.*?(?:\n\s*\2[ \t]*(?=\n|$)|$)", re.S)
"""A here-document: its text is the input of a command, not commands."""
_OPERATORS = {"&&", "||", ";", "|", "&", "\n", "(", ")"}
_PREFIXES = {"sudo", "env", "time", "nohup", "exec", "command"}
"""Words before a command that run the command after them."""
_SHELLS = {"bash", "sh", "zsh", "dash"}
_PROGRAM = re.compile(r"\w[\w.+-]*")
_CD = {"cd", "pushd", "popd"}


def _shell_programs(tool: str, call: str) -> list[str]:
    """The programs a shell tool's rendered call runs, in order: the first word of each
    command of its command line (split at ``&&``, ``||``, ``;``, ``|``, ``&``, a new line,
    brackets; quotes and here-documents understood), past variable settings and
    ``sudo``/``env``/``time``…, a path's last part (``.venv/bin/pytest``: pytest); ``cd`` and
    the like left out. None for a call of another tool, or one whose command cannot be read.
    Only the rendered command is read (its start, where a value was cut)."""
    if not any(hint in tool.lower() for hint in _SHELL_HINTS):
        return []
    arguments = _arguments(tool, call)
    found = _COMMAND.search(arguments)
    if found is None:
        return []
    value = arguments[found.end() :]
    if not value.startswith("["):
        script = _json_string(value)
        return [] if script is None else _program_names(_command_words(script))
    argv = _argv(value)  # Codex's shell: ["bash", "-lc", SCRIPT], or a program's argv
    if argv[0:1] and argv[0].rsplit("/", 1)[-1] in _SHELLS and argv[1:2] in (["-c"], ["-lc"]):
        return _program_names(_command_words(argv[2])) if len(argv) > 2 else []
    return _program_names(argv[:1])


def _json_string(value: str) -> str | None:
    """The string a rendered JSON value starts with (its start, where the value was cut)."""
    match = _JSON_STRING.match(_CUT.split(value, maxsplit=1)[0])
    return None if match is None else _decoded(match.group(1))


def _decoded(body: str) -> str:
    """A JSON string's body decoded (one cut short loses the escape it was cut in)."""
    body = re.sub(r"\\u[0-9a-fA-F]{0,3}$", "", body)
    try:
        decoded: str = json.loads(f'"{body}"')
    except ValueError:
        return body
    return decoded


def _argv(value: str) -> list[str]:
    """The strings of the rendered JSON list ``value`` starts with (those before the cut,
    where it was cut)."""
    try:
        argv, _ = json.JSONDecoder().raw_decode(value)
    except ValueError:
        return [_decoded(s) for s in _JSON_STRING.findall(_CUT.split(value, maxsplit=1)[0])]
    return [a for a in argv if isinstance(a, str)] if isinstance(argv, list) else []


def _program_names(words: Iterable[str]) -> list[str]:
    names = (word.strip("'\"").rsplit("/", 1)[-1] for word in words)
    return [name for name in names if _PROGRAM.fullmatch(name) and name not in _CD]


def _command_words(script: str) -> Iterator[str]:
    """The first word of each command of a command line (past settings and prefixes)."""
    starting = True
    for part in _SHELL_PART.findall(_HEREDOC.sub(r"\3", script)):
        if part in _OPERATORS:
            starting = True
        elif starting and not re.match(r"\w+=", part) and part not in _PREFIXES:
            starting = False
            yield part
