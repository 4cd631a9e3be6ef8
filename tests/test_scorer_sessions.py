"""The labelled sessions a step scorer is trained and measured on (tests/scorer_sessions.py):
they load cleanly, every step is labelled by the stated rules, and there are enough of them."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest
from scorer_sessions import ASKS, LABELLER, rule_label, write_labelled_sessions

import analysis
from analysis.align import (
    DEFAULT_TEST_SHARE,
    assign_splits,
    label_set,
    read_step_labels,
    references,
)
from analysis.models import step_item_id
from analysis.render import render_steps, select_steps
from analysis.study import LabelStore

SPLIT_SEED = 0
"""The seed of the split ``tsq align`` uses by default (its ``--seed``)."""

MENU = {"Grep", "Bash", "WebSearch", "Read", "Glob", "Edit"}

# An implementation of the rules of its own, to check the generator's labels against.
_BASH_SEARCH = re.compile(r"(?:^|&&|;|\|\||\$\(|xargs(?:\s+-\S+)*|-exec)\s*(?:grep|rg|egrep)\s")
_OWN_REPOSITORY = (
    "this repo", "my repo", "our repo", "this codebase", "our codebase", "my codebase",
    "this project", "my project", "our project", "my working tree", "current branch", "my code",
)  # fmt: skip


def expected_value(calls: list[analysis.ToolCall]) -> tuple[str, set[int]]:
    """A step's label by the rules, and which rules (1, 2) its calls break."""
    broken = set()
    for call in calls:
        if call.name == "Bash" and _BASH_SEARCH.search(call.input["command"]):
            broken.add(1)
        query = str(call.input.get("query", "")).lower()
        if call.name == "WebSearch" and any(phrase in query for phrase in _OWN_REPOSITORY):
            broken.add(2)
    return ("incorrect" if broken else "correct"), broken


class Output:
    def __init__(
        self, folder: Path, labels: Path, loaded: analysis.LoadResult, store: Path
    ) -> None:
        self.folder = folder
        self.labels_path = labels
        """Writing the sessions and loading them."""
        self.loaded = loaded
        self.steps = {
            step_item_id(session.session_id, step.turn.index, step.index, step.parent_call_id): (
                session,
                step,
            )
            for session in self.loaded.sessions
            for step in select_steps(session, "all", text_steps=False, subagents=True)
        }
        self.rows = [json.loads(line) for line in labels.read_text().splitlines()]
        self.labels, self.label_issues = read_step_labels(labels)
        self.refs = references(self.labels)
        assignments = assign_splits(self.refs, {}, DEFAULT_TEST_SHARE, SPLIT_SEED)
        self.splits = {a.session_id: a.split for a in assignments}
        # as `tsq align --labels FILE` makes it: the file's labels in a new store
        as_align = label_set(LabelStore(store), self.labels, DEFAULT_TEST_SHARE, SPLIT_SEED)
        self.align_splits = as_align.splits


@pytest.fixture(scope="module")
def output(tmp_path_factory: pytest.TempPathFactory) -> Output:
    folder = tmp_path_factory.mktemp("scorer-sessions")
    labels = write_labelled_sessions(folder)
    loaded = analysis.load([folder])
    store = tmp_path_factory.mktemp("store") / "labels.sqlite"
    return Output(folder, labels, loaded, store)


def test_the_sessions_load_without_issues_one_file_each(output: Output) -> None:
    assert output.loaded.all_issues() == []
    sessions = output.loaded.sessions
    assert len(sessions) == 48
    assert len({s.session_id for s in sessions}) == 48
    for session in sessions:
        path = Path(session.source)
        assert path.name == f"{session.session_id}.jsonl"
        assert path.parent.parent == output.folder
        assert session.format == "claude-code"


def test_every_step_is_labelled_once_and_every_label_is_a_step(output: Output) -> None:
    assert output.label_issues == []
    assert all(row["labeller"] == LABELLER for row in output.rows)
    items = [label.item_id for label in output.labels]
    assert len(items) == len(set(items))
    assert set(items) == set(output.steps)
    assert any(step.parent_call_id for _, step in output.steps.values())  # subagents' steps too


def test_the_labels_follow_the_rules(output: Output) -> None:
    for label in output.labels:
        _, step = output.steps[label.item_id]
        calls = step.message.tool_calls
        assert label.value == expected_value(calls)[0], (label.item_id, calls)
        by_rule_label = {
            rule_label(c.name, c.input.get("command") or c.input.get("query") or "") for c in calls
        }
        assert label.value == ("incorrect" if "incorrect" in by_rule_label else "correct")


def test_each_turn_has_grep_and_the_other_tools_on_its_menu(output: Output) -> None:
    for session in output.loaded.sessions:
        for turn in session.turns:
            names = set(analysis.catalog_for_turn(session, turn).catalog.names())
            assert names >= MENU, (session.session_id, turn.agent_version)
    session, step = next(iter(output.steps.values()))
    (rendered,) = render_steps(session, [step])
    assert {tool.name for tool in rendered.tools} >= MENU


def test_amounts_after_the_split(output: Output) -> None:
    assert len(output.loaded.sessions) >= 40
    incorrect: dict[str, Counter[str]] = {"dev": Counter(), "test": Counter()}
    rules: dict[str, set[int]] = {"dev": set(), "test": set()}
    for item, ref in output.refs.items():
        session, step = output.steps[item]
        split = output.splits[session.session_id]
        if ref.value == "incorrect":
            incorrect[split][session.session_id] += 1
            rules[split] |= expected_value(step.message.tool_calls)[1]
    total = sum(1 for ref in output.refs.values() if ref.value == "incorrect")
    assert sum(incorrect["test"].values()) >= 50
    assert len(incorrect["test"]) >= 10
    assert sum(incorrect["dev"].values()) == total - sum(incorrect["test"].values()) > 0
    assert rules == {"dev": {1, 2}, "test": {1, 2}}
    assert set(output.splits) == {s.session_id for s in output.loaded.sessions}
    assert output.align_splits == output.splits
    clean = {s.session_id for s in output.loaded.sessions} - set(incorrect["dev"])
    assert clean - set(incorrect["test"])  # some sessions break no rule


def test_no_command_or_query_is_in_two_sessions(output: Output) -> None:
    sessions_of: defaultdict[str, set[str]] = defaultdict(set)
    for session, step in output.steps.values():
        for call in step.message.tool_calls:
            if call.name in ("Bash", "WebSearch"):
                text = call.input.get("command") or call.input["query"]
                sessions_of[text].add(session.session_id)
    assert len(sessions_of) > 300
    assert [text for text, sessions in sessions_of.items() if len(sessions) > 1] == []


def _searches(output: Output) -> list[str]:
    return [
        call.input["command"]
        for _, step in output.steps.values()
        for call in step.message.tool_calls
        if call.name == "Bash" and _BASH_SEARCH.search(call.input["command"])
    ]


def test_the_steps_vary(output: Output) -> None:
    sessions = output.loaded.sessions
    asks = [turn.ask for session in sessions for turn in session.turns[:1]]
    shapes = [re.compile(re.sub(r"\\\{\w+\\\}", ".+", re.escape(ask))) for ask in ASKS]
    assert len(ASKS) >= 15
    assert len({i for ask in asks for i, shape in enumerate(shapes) if shape.fullmatch(ask)}) >= 15
    assert Counter(len(session.turns) for session in sessions).keys() == {1, 2, 3}
    per_turn = Counter(
        len([s for s in select_steps(session, "all") if s.turn is turn])
        for session in sessions
        for turn in session.turns
    )
    assert min(per_turn) == 2
    assert max(per_turn) == 8
    searches = _searches(output)
    for shape in ("grep ", "rg ", "egrep ", "-rn", " -i", "--include", " -l", "| head", "cd ",
                  "xargs", "-exec", "'", '"'):  # fmt: skip
        assert any(shape in command for command in searches), shape
    names = Counter(
        call.name for _, step in output.steps.values() for call in step.message.tool_calls
    )
    assert names.keys() >= MENU | {"Task", "Write"}
    results = [
        call.result
        for _, step in output.steps.values()
        for call in step.message.tool_calls
        if call.result is not None
    ]
    assert len(results) == sum(names.values())
    assert 0.05 < sum(result.is_error for result in results) / len(results) < 0.3
    languages = {Path(call.input["file_path"]).suffix for _, s in output.steps.values()
                 for call in s.message.tool_calls if call.name == "Edit"}  # fmt: skip
    assert len(languages) == 6


def test_the_same_seed_writes_the_same_bytes(tmp_path: Path, output: Output) -> None:
    labels = write_labelled_sessions(tmp_path / "again")
    assert labels.read_bytes() == output.labels_path.read_bytes()
    other = write_labelled_sessions(tmp_path / "other", sessions=6, seed=1)
    assert other.read_bytes() != labels.read_bytes()
    assert analysis.load([tmp_path / "other"]).all_issues() == []


RULE_CASES: list[tuple[str, Any, str]] = [
    ("Bash", "grep -rn retry src/", "incorrect"),
    ("Bash", "rg -i 'token' .", "incorrect"),
    ("Bash", "egrep -l 'a|b' lib/x.rb | head", "incorrect"),
    ("Bash", "cd src && grep -n foo bar.py", "incorrect"),
    ("Bash", "find . -name '*.go' | xargs grep -n Foo", "incorrect"),
    ("Bash", "find src -name '*.py' -print0 | xargs -0 grep -l foo", "incorrect"),
    ("Bash", "find src -type f -exec grep -l foo {} +", "incorrect"),
    ("Bash", "grep -n foo $(git ls-files '*.py')", "incorrect"),
    ("Bash", "/usr/bin/grep -rn foo .", "incorrect"),
    ("Bash", "LC_ALL=C grep -rn foo . 2>/dev/null || true", "incorrect"),
    ("Bash", "pytest -q 2>&1 | grep -E 'FAILED|ERROR'", "correct"),
    ("Bash", "git log --oneline | grep -i fix", "correct"),
    ("Bash", "npm run test:unit -- --grep parser", "correct"),
    ("Bash", "git grep -n foo", "correct"),
    ("Bash", "pytest tests/test_grep.py -q", "correct"),
    ("Bash", "git status", "correct"),
    ("Grep", "retry", "correct"),
    ("WebSearch", "what changed in the latest commit of this repo", "incorrect"),
    ("WebSearch", "Current branch of my repository", "incorrect"),
    ("WebSearch", "is there a TODO in our codebase", "incorrect"),
    ("WebSearch", "pydantic field validator docs", "correct"),
    ("WebSearch", '"TypeError: Cannot read properties of undefined"', "correct"),
    ("WebSearch", "how to squash commits in git", "correct"),
    ("Read", "/repo/src/a.py", "correct"),
]


@pytest.mark.parametrize(("tool", "text", "expected"), RULE_CASES)
def test_rule_label(tool: str, text: str, expected: str) -> None:
    assert rule_label(tool, text) == expected
