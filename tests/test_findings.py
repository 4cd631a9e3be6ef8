"""Diagnostics with stable codes: why a step (or turn) scored what it scored."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest
from conftest import BAD, tsq
from records import assistant, text, tool_use, user

import analysis
from analysis.findings import collect_findings, findings_for_step
from analysis.models import (
    AssistantMessage,
    Judgment,
    Session,
    Step,
    ToolCall,
    ToolCatalog,
    ToolDef,
    Turn,
    Vote,
)
from analysis.render import turn_steps


def judgment(
    turn_index, score, condition="full", votes=None, requested=3, catalog=10, rendered=True
):
    votes = votes if votes is not None else [Vote(verdict="correct", reasoning="ok")] * 3
    return Judgment(
        session_id=BAD,
        turn_index=turn_index,
        score=score,
        votes=votes,
        n_requested=requested,
        n_valid=len(votes),
        n_discarded=requested - len(votes),
        model="m",
        spec_name="r",
        condition=condition,
        catalog_size=catalog,
        call_rendered=rendered,
        context_chars=0,
        unscored_reason=None if votes else "no valid verdict in 3 attempts",
    )


@pytest.fixture(scope="module")
def bad_choices():
    loaded = analysis.load([analysis.sample_data_dir() / "transcripts"])
    return next(s for s in loaded.sessions if s.session_id == BAD)


def codes(findings, turn="any"):
    """The codes of the findings about ``turn`` (None: the session's), or of all of them."""
    return [f.code for f in findings if turn == "any" or f.turn_index == turn]


def test_a_plain_trace_has_no_catalog_once_for_the_session(bad_choices):
    (finding,) = collect_findings([bad_choices])
    assert (finding.code, finding.severity) == ("NO_CATALOG", "info")
    assert "tsq export" in finding.message  # says what to do
    assert analysis.findings.is_about_input(finding)
    assert (finding.turn_index, finding.step_index) == (None, None)
    for turn in bad_choices.turns:  # it still explains every turn
        about = analysis.findings.findings_for_turn([finding], BAD, turn.index, "full")
        assert about == [finding]


def test_judgment_findings(bad_choices):
    split = [Vote(verdict="correct", reasoning="a")] * 2 + [
        Vote(verdict="incorrect", reasoning="b")
    ]
    judgments = [
        judgment(0, 1.0, "bare", catalog=1),
        judgment(
            1,
            0.0,
            "catalog_no_call",
            votes=[Vote(verdict="incorrect", reasoning="x")] * 3,
            rendered=False,
        ),
        judgment(2, 2 / 3, votes=split),
        judgment(3, None, votes=[], requested=3),
    ]
    findings = collect_findings([bad_choices], judgments)
    assert codes(findings, None) == ["NO_CATALOG"]
    assert codes(findings, 0) == ["SINGLE_TOOL_CATALOG"]
    assert codes(findings, 1) == ["CALL_NOT_RENDERED"]
    assert codes(findings, 2) == ["SPLIT_VOTE"]
    split = next(f for f in findings if f.code == "SPLIT_VOTE")
    assert split.message == (
        "2 of 3 judges thought the choice was right: an ambiguous turn, worth a human look."
    )
    assert split.condition == "full"
    assert next(f for f in findings if f.code == "NO_CATALOG").condition is None
    assert codes(findings, 3) == ["UNSCORED", "DISCARDED_VOTES"]
    assert "menu of one" in next(f.message for f in findings if f.code == "SINGLE_TOOL_CATALOG")
    assert all(f.step_index is None for f in findings), "turn-level judgments, turn findings"


def test_uniform_scores_are_a_session_finding(bad_choices):
    findings = collect_findings([bad_choices], [judgment(i, 1.0) for i in range(4)])
    (uniform,) = [f for f in findings if f.code == "UNIFORM_SESSION_SCORES"]
    assert uniform.turn_index is None
    assert uniform.message.startswith("Every judged turn scored 1.0: ")
    assert uniform.condition == "full"


def test_catalog_findings_on_a_trace_catalog(write_jsonl):
    init = {
        "type": "system",
        "subtype": "init",
        "session_id": "s1",
        "tools": ["Read"],
        "timestamp": "2026-03-02T10:00:00Z",
    }
    path = write_jsonl(
        [
            init,
            user(
                "u1",
                "open the settings module please and show me",
                timestamp="2026-03-02T09:00:00Z",
            ),
            assistant("a1", "m1", tool_use("t1", "Read", file_path="settings.py")),
            assistant("a2", "m1", tool_use("t2", "mcp__db__query", sql="select 1")),
            user("u2", "yes"),
            assistant("a3", "m2", text("ok")),
        ]
    )
    (session,) = analysis.load([path]).sessions
    findings = collect_findings([session])
    # one catalog serves both turns, and it is dated after both (the crafted records are dated
    # 2026-02-11): what is wrong with it is said once, for the session
    assert codes(findings, None) == [
        "SINGLE_TOOL_CATALOG",
        "RETROACTIVE_CATALOG",
        "USED_TOOLS_MISSING_FROM_CATALOG",
    ]
    assert codes(findings, 0) == ["CALLED_TOOL_NOT_IN_CATALOG"]
    (called,) = [f for f in findings if f.code == "CALLED_TOOL_NOT_IN_CATALOG"]
    (step,) = turn_steps(session.turns[0])  # a1 and a2 are one response: parallel calls
    assert (called.step_index, called.parent_call_id) == (step.index, None)
    assert called.message.startswith("Called mcp__db__query, which")
    assert "CONTEXT_DEPENDENT_ASK" not in codes(findings, 1)  # "yes" has its context


def test_context_dependent_ask_without_context(write_jsonl):
    path = write_jsonl(
        [user("u1", "yes do #1"), assistant("a1", "m1", tool_use("t1", "Edit", file_path="a"))]
    )
    (session,) = analysis.load([path]).sessions
    assert "CONTEXT_DEPENDENT_ASK" in codes(collect_findings([session]), 0)


def test_cli_lint_json_contract(tmp_path):
    sample = analysis.sample_data_dir() / "transcripts" / "bad-choices.synthetic.jsonl"
    judgments = tmp_path / "j.jsonl"
    judgments.write_text(
        "".join(judgment(i, 0.5 if i == 2 else 1.0).model_dump_json() + "\n" for i in range(4))
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "analysis",
            "lint",
            str(sample),
            "--judgments",
            str(judgments),
            "--json",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert set(document) == {"findings"}
    assert set(document["findings"][0]) == {
        "session_id",
        "turn_index",
        "step_index",
        "parent_call_id",
        "code",
        "severity",
        "message",
        "condition",
    }
    assert [f["code"] for f in document["findings"] if f["turn_index"] is None] == ["NO_CATALOG"]
    assert [f["code"] for f in document["findings"] if f["turn_index"] == 2] == ["SPLIT_VOTE"]


def test_judgments_exported_from_another_platform_load_through_a_mapping(tmp_path, bad_choices):
    from analysis.judge import ExternalColumns, load_judgments

    export = tmp_path / "platform.csv"
    export.write_text(
        "conv,turn,tsq,why\n" + f"{BAD},1,0.0,web search for a local question\n" + f"{BAD},2,0.5,\n"
    )
    columns = ExternalColumns(session_id="conv", turn="turn", score="tsq", explanation="why")
    loaded = load_judgments(export, columns)
    assert [(j.turn_index, j.score) for j in loaded] == [(1, 0.0), (2, 0.5)]
    assert loaded[0].votes[0].reasoning == "web search for a local question"
    assert "SPLIT_VOTE" in codes(collect_findings([bad_choices], loaded), 2)


def test_context_findings_agree_with_the_rendered_prior_context(corpus):
    from analysis.findings import is_context_dependent
    from analysis.render import RenderOptions, render_turn

    sessions = analysis.load([corpus / "tau-bench"]).sessions[:40]
    options = RenderOptions(context_chars=600)
    findings = collect_findings(sessions, options=options)
    flagged = {(f.session_id, f.turn_index) for f in findings if f.code == "CONTEXT_DEPENDENT_ASK"}
    expected = {
        (s.session_id, t.index)
        for s in sessions
        for t in s.turns
        if is_context_dependent(t.ask)
        and (t.index == 0 or render_turn(s, t, options=options).context_truncated)
    }
    assert flagged == expected
    assert len(expected) > 10  # tau-bench users answer "yes" a lot


def test_cli_lint_bad_judgments_file_is_one_sentence_with_its_line(tmp_path):
    sample = analysis.sample_data_dir() / "transcripts" / "bad-choices.synthetic.jsonl"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(judgment(0, 1.0).model_dump_json() + "\n" + '{"not": "a judgment"}\n')
    done = tsq("lint", str(sample), "--judgments", str(bad))
    assert done.returncode == 2
    (message,) = done.stderr.strip().splitlines()
    assert message.startswith(f"{bad}:2: not a judgment (")
    missing = tsq("lint", str(sample), "--judgments", str(tmp_path / "x"))
    assert (
        missing.stderr.strip() == f"{tmp_path / 'x'}: cannot be read (No such file or directory)."
    )


VERDICTS = {
    "pass": ["correct"] * 3,
    "fail": ["incorrect"] * 3,
    "split": ["correct", "correct", "incorrect"],
    "half": ["correct", "incorrect"],
}
DISSENT = "Read cannot delete a file, and Bash was on the menu for exactly this kind of job."


def votes(kind):
    return [
        Vote(verdict=v, reasoning=DISSENT if v == "incorrect" else "Fine choice.")
        for v in VERDICTS[kind]
    ]


def step_judgment(step: Step, session_id, verdicts, condition="full", requested=None, **extra):
    requested = len(verdicts) if requested is None else requested
    correct = sum(v.verdict == "correct" for v in verdicts)
    fields = {
        "session_id": session_id,
        "turn_index": step.turn.index,
        "step_index": step.index,
        "message_id": step.message_id,
        "parent_call_id": step.parent_call_id,
        "score": correct / len(verdicts) if verdicts else None,
        "votes": verdicts,
        "n_requested": requested,
        "n_valid": len(verdicts),
        "n_discarded": requested - len(verdicts),
        "model": "m",
        "spec_name": "r",
        "condition": condition,
        "catalog_size": 10,
        "call_rendered": bool(step.message.tool_calls) and condition != "catalog_no_call",
        "context_chars": 0,
        "unscored_reason": None if verdicts else "no valid verdict in 3 attempts",
    }
    return Judgment(**(fields | extra))


@pytest.fixture(scope="module")
def spotter(corpus):
    """A real Claude Code session: two turns of 8 and 3 tool-calling responses, a subagent."""
    (session,) = analysis.load([corpus / "claude-code" / "spotter" / "subagent.jsonl"]).sessions
    return session


def all_steps(session):
    return [
        step for turn in session.turns for step in turn_steps(turn, text_steps=True, subagents=True)
    ]


def test_step_judgments_give_step_findings(spotter):
    steps = all_steps(spotter)
    judgments = []
    for n, step in enumerate(steps):
        if not step.message.tool_calls or n % 4 == 2:  # the call left out (or there is none)
            judgments.append(
                step_judgment(step, spotter.session_id, votes("fail"), "catalog_no_call")
            )
        elif n % 4 == 0:
            judgments.append(step_judgment(step, spotter.session_id, votes("split")))
        elif n % 4 == 1:
            judgments.append(step_judgment(step, spotter.session_id, [], requested=3))
        else:
            judgments.append(
                step_judgment(step, spotter.session_id, votes("pass")[:2], requested=3)
            )
    findings = collect_findings([spotter], judgments)

    expected: Counter[tuple] = Counter()
    for judgment, step in zip(judgments, steps, strict=True):
        where = (judgment.turn_index, step.index, step.parent_call_id)
        if judgment.score is None:
            expected["UNSCORED", *where] += 1
        elif 0 < judgment.score < 1:
            expected["SPLIT_VOTE", *where] += 1
        if judgment.n_discarded:
            expected["DISCARDED_VOTES", *where] += 1
        if judgment.condition == "catalog_no_call" and step.message.tool_calls:
            expected["CALL_NOT_RENDERED", *where] += 1
    found = Counter(
        (f.code, f.turn_index, f.step_index, f.parent_call_id)
        for f in findings
        if f.step_index is not None
    )
    assert found == expected
    assert {parent for *_, parent in expected} > {None}, "subagents' steps are among them"
    assert any(not s.message.tool_calls for s in steps), "a text-only response was judged"
    session_wide = [f for f in findings if f.turn_index is None]
    assert [f.code for f in session_wide] == ["UNIFORM_SESSION_SCORES", "NO_CATALOG"]
    assert session_wide[0].message.startswith("Every judged turn scored 0.0")
    assert session_wide[0].condition == "catalog_no_call"
    assert all(f.turn_index is None for f in findings if f.step_index is None)
    split = next(f for f in findings if f.code == "SPLIT_VOTE")
    assert split.message.endswith("an ambiguous step, worth a human look.")


def test_called_tool_not_in_catalog_is_per_step():
    catalog = ToolCatalog(
        tools=[ToolDef(name="Read", description="Read a file."), ToolDef(name="mcp__db__query")]
    )
    turn = Turn(
        index=0,
        ask="tidy up the settings module please",
        catalog_index=0,
        messages=[
            AssistantMessage(id="m0", text="Let me look first."),
            AssistantMessage(id="m1", tool_calls=[ToolCall(id="c1", name="Read")]),
            AssistantMessage(
                id="m2",
                tool_calls=[
                    ToolCall(id="c2", name="Bash"),
                    ToolCall(id="c3", name="Read"),
                    ToolCall(id="c4", name="Bash"),
                ],
            ),
        ],
    )
    session = Session(
        session_id="s", source="s.jsonl", format="claude-code", catalogs=[catalog], turns=[turn]
    )
    findings = collect_findings([session])
    (called,) = [f for f in findings if f.code == "CALLED_TOOL_NOT_IN_CATALOG"]
    assert (called.turn_index, called.step_index) == (0, 2)
    assert called.message.startswith("Called Bash, which")
    (undescribed,) = [f for f in findings if f.code == "MISSING_DESCRIPTIONS"]
    assert undescribed.turn_index is None
    assert [f.code for f in findings if f.turn_index is None] == [
        "MISSING_DESCRIPTIONS",
        "USED_TOOLS_MISSING_FROM_CATALOG",
    ]


def _session_of(catalogs, catalog_of_turn):
    turns = [
        Turn(
            index=n,
            ask=f"run the test suite for package {n} please",
            catalog_index=index,
            messages=[AssistantMessage(id=f"m{n}", tool_calls=[ToolCall(id=f"c{n}", name="Read")])],
        )
        for n, index in enumerate(catalog_of_turn)
    ]
    return Session(
        session_id="s", source="s.jsonl", format="claude-code", catalogs=catalogs, turns=turns
    )


READ = ToolDef(name="Read", description="Read a local file.")
QUERY = ToolDef(name="mcp__db__query")


@pytest.mark.parametrize(
    ("catalogs", "catalog_of_turn", "expected"),
    [
        # the same catalog serves every turn: said once, for the session
        (
            [ToolCatalog(tools=[QUERY])],
            [0, 0, 0],
            {None: ["SINGLE_TOOL_CATALOG", "MISSING_DESCRIPTIONS"]},
        ),
        # two catalogs alike: still once
        (
            [ToolCatalog(tools=[READ, QUERY]), ToolCatalog(tools=[READ, QUERY])],
            [0, 1, 1],
            {None: ["MISSING_DESCRIPTIONS"]},
        ),
        # different catalogs: each turn its own
        (
            [ToolCatalog(tools=[QUERY]), ToolCatalog(tools=[READ, QUERY, READ])],
            [0, 1, 0],
            {
                0: ["SINGLE_TOOL_CATALOG", "MISSING_DESCRIPTIONS"],
                1: ["MISSING_DESCRIPTIONS"],
                2: ["SINGLE_TOOL_CATALOG", "MISSING_DESCRIPTIONS"],
            },
        ),
        # one turn without a catalog: NO_CATALOG for it alone
        (
            [ToolCatalog(tools=[READ])],
            [None, 0, 0],
            {0: ["NO_CATALOG"], 1: ["SINGLE_TOOL_CATALOG"], 2: ["SINGLE_TOOL_CATALOG"]},
        ),
        ([], [None, None], {None: ["NO_CATALOG"]}),
    ],
)
def test_catalog_findings_are_said_once_when_they_hold_for_every_turn(
    catalogs, catalog_of_turn, expected
):
    findings = [
        f
        for f in collect_findings([_session_of(catalogs, catalog_of_turn)])
        if f.code in ("NO_CATALOG", "SINGLE_TOOL_CATALOG", "MISSING_DESCRIPTIONS")
    ]
    by_turn: dict = {}
    for finding in findings:
        by_turn.setdefault(finding.turn_index, []).append(finding.code)
    assert by_turn == expected


def test_a_catalog_captured_mid_session_is_retroactive_for_the_turns_before_it():
    from datetime import UTC, datetime

    catalog = ToolCatalog(tools=[READ], captured_at=datetime(2026, 3, 2, 10, tzinfo=UTC))
    session = _session_of([catalog], [0, 0, 0])
    for turn, hour in zip(session.turns, (9, 11, 12), strict=True):
        turn.timestamp = datetime(2026, 3, 2, hour, tzinfo=UTC)
    findings = collect_findings([session])
    assert [(f.turn_index, f.code) for f in findings if f.code != "SINGLE_TOOL_CATALOG"] == [
        (0, "RETROACTIVE_CATALOG")
    ]
    session.turns[1].timestamp = session.turns[2].timestamp = session.turns[0].timestamp
    (retroactive,) = [f for f in collect_findings([session]) if f.code == "RETROACTIVE_CATALOG"]
    assert retroactive.turn_index is None, "captured after every turn: said once"


def test_a_live_dump_taken_after_the_session_is_retroactive(spotter):
    """A live dump sent long after the session started says so; one taken before its first turn
    does not. The turns' own times decide, read here from the session."""
    from datetime import timedelta

    last = max(turn.timestamp for turn in spotter.turns)
    first = min(turn.timestamp for turn in spotter.turns)
    for captured, expected in ((last + timedelta(days=30), True), (first - timedelta(1), False)):
        live = ToolCatalog(tools=[READ], source="live.json", captured_at=captured)
        codes = {f.code for f in collect_findings([spotter], live=live)}
        assert ("RETROACTIVE_CATALOG" in codes) is expected
    assert "RETROACTIVE_CATALOG" not in {f.code for f in collect_findings([spotter])}


def _mean(scores):
    return sum(scores) / len(scores)


def test_uniform_session_scores_compares_turn_scores(spotter):
    main = [turn_steps(turn) for turn in spotter.turns]
    assert [len(steps) for steps in main] == [8, 3]
    alike = {0: ["pass", "fail"] * 4, 1: ["pass", "fail", "half"]}  # steps differ, turns do not
    unlike = {0: ["pass"] + ["fail"] * 7, 1: ["pass", "fail", "fail"]}  # step scores alike only
    for kinds, uniform in ((alike, True), (unlike, False)):
        judgments = [
            step_judgment(step, spotter.session_id, votes(kind))
            for turn, steps in enumerate(main)
            for step, kind in zip(steps, kinds[turn], strict=True)
        ]
        turn_means = {
            turn.index: _mean([j.score for j in judgments if j.turn_index == turn.index])
            for turn in spotter.turns
        }
        assert (len(set(turn_means.values())) == 1) is uniform
        assert len({j.score for j in judgments}) > 1
        found = [
            f.message
            for f in collect_findings([spotter], judgments)
            if f.code == "UNIFORM_SESSION_SCORES"
        ]
        assert found == (
            [
                "Every judged turn scored 0.5 (a turn's score is the mean of its judged "
                "steps): a judge that cannot tell turns apart is usually missing the catalog or "
                "the call."
            ]
            if uniform
            else []
        )
    assert turn_means == {0: 1 / 8, 1: 1 / 3}


@pytest.fixture
def yes_session(write_jsonl):
    """One context-dependent turn ("yes do #1", nothing before it) of two tool-calling steps."""
    path = write_jsonl(
        [
            user("u1", "yes do #1"),
            assistant("a1", "m1", tool_use("t1", "Read", file_path="lock")),
            assistant("a2", "m2", tool_use("t2", "Read", file_path="lock")),
        ]
    )
    (session,) = analysis.load([path]).sessions
    return session


def test_findings_for_step_are_the_step_its_turn_and_its_session(yes_session):
    first, second = turn_steps(yes_session.turns[0])
    sid = yes_session.session_id
    judgments = [
        step_judgment(first, sid, [], requested=3),
        step_judgment(second, sid, votes("split")),
        step_judgment(second, sid, votes("pass"), "bare", catalog_size=1),
    ]
    findings = collect_findings([yes_session], judgments)
    assert {f.code for f in findings} == {
        "NO_CATALOG",
        "CONTEXT_DEPENDENT_ASK",
        "UNSCORED",
        "DISCARDED_VOTES",
        "SPLIT_VOTE",
        "SINGLE_TOOL_CATALOG",
    }

    def about(step, condition):
        return [f.code for f in findings_for_step(findings, sid, 0, step.index, condition)]

    # what the judge saw first, most serious first, then the most specific; the input last
    assert about(second, "full") == ["CONTEXT_DEPENDENT_ASK", "SPLIT_VOTE", "NO_CATALOG"]
    assert about(second, "bare") == ["SINGLE_TOOL_CATALOG", "CONTEXT_DEPENDENT_ASK", "NO_CATALOG"]
    assert about(first, "full") == [
        "UNSCORED",
        "DISCARDED_VOTES",
        "CONTEXT_DEPENDENT_ASK",
        "NO_CATALOG",
    ]
    assert sorted(
        findings_for_step(findings, sid, 0, second.index, "full", "toolu_x"), key=repr
    ) == sorted([f for f in findings if f.step_index is None], key=repr), (
        "a subagent's step of the same number is another step"
    )
    whole_turn = analysis.findings.findings_for_turn(findings, sid, 0, "full")
    assert [f.code for f in whole_turn] == [
        "UNSCORED",
        "DISCARDED_VOTES",
        "CONTEXT_DEPENDENT_ASK",
        "SPLIT_VOTE",
        "NO_CATALOG",
    ]


def test_why_this_score_for_a_step_leads_with_the_votes(yes_session):
    first, second = turn_steps(yes_session.turns[0])
    sid = yes_session.session_id
    split = step_judgment(second, sid, votes("split"))
    failed = step_judgment(second, sid, votes("fail"))
    unscored = step_judgment(first, sid, [], requested=3)
    bare = step_judgment(second, sid, votes("pass"), "bare", catalog_size=1)
    findings = collect_findings([yes_session], [split, unscored, bare])

    def why(judgment):
        about = findings_for_step(findings, sid, 0, judgment.step_index, judgment.condition)
        return analysis.why_this_score(about, judgment)

    first_words = " ".join(DISSENT.split()[:12])
    context = next(f for f in findings if f.code == "CONTEXT_DEPENDENT_ASK")
    assert why(split) == (
        f'2 of 3 judges said correct; the dissent, judge 3, said incorrect: "{first_words}…". '
        f"Ask that leans on earlier turns (CONTEXT_DEPENDENT_ASK): {context.message}"
    )
    assert why(failed).startswith(
        "0 of 3 judges said correct. Ask that leans on earlier turns (CONTEXT_DEPENDENT_ASK): "
    )
    assert why(unscored).startswith(
        "No valid vote (no valid verdict in 3 attempts): unscored, not 0. Unscored (UNSCORED): "
    ), "the finding about the step itself leads among errors"
    assert why(bare).startswith(
        "3 of 3 judges said correct. One-tool menu (SINGLE_TOOL_CATALOG): The judge saw a menu "
        "of one tool"
    )
    half = step_judgment(second, sid, votes("half"))
    assert analysis.why_this_score([], half) == (
        f'1 of 2 judges said correct; evenly split, judge 2, said incorrect: "{first_words}…". '
        "No finding: the "
        "judge saw the whole menu with descriptions and the chosen call, so this score (0.50) "
        "reflects its reading of the choice."
    )


def test_cli_lint_json_names_the_step_and_the_subagent(spotter, tmp_path, corpus):
    step = next(s for s in all_steps(spotter) if s.parent_call_id is not None)
    judgments = tmp_path / "steps.jsonl"
    judgments.write_text(
        step_judgment(step, spotter.session_id, votes("split")).model_dump_json() + "\n"
    )
    source = corpus / "claude-code" / "spotter" / "subagent.jsonl"
    done = tsq("lint", str(source), "--json", "--judgments", str(judgments))
    assert done.returncode == 0, done.stderr
    (split,) = [f for f in json.loads(done.stdout)["findings"] if f["code"] == "SPLIT_VOTE"]
    assert (split["turn_index"], split["step_index"], split["parent_call_id"]) == (
        step.turn.index,
        step.index,
        step.parent_call_id,
    )


def test_cli_lint_on_the_claude_code_corpus_says_no_catalog_once_per_session(corpus):
    done = tsq("lint", str(corpus / "claude-code"), "--json")
    assert done.returncode == 0, done.stderr
    findings = json.loads(done.stdout)["findings"]
    per_session = Counter(f["session_id"] for f in findings if f["code"] == "NO_CATALOG")
    assert per_session, "Claude Code transcripts carry no catalog"
    assert max(per_session.values()) == 1
    assert all(f["turn_index"] is None for f in findings if f["code"] == "NO_CATALOG")


def _votes(*verdicts, discarded=0):
    return Judgment(
        session_id="s",
        turn_index=0,
        step_index=0,
        score=sum(v == "correct" for v in verdicts) / len(verdicts) if verdicts else None,
        votes=[Vote(verdict=v, reasoning=f"judge says {v} because of reasons") for v in verdicts],
        n_requested=len(verdicts) + discarded,
        n_valid=len(verdicts),
        n_discarded=discarded,
        model="hand-built",
        spec_name="test",
        condition="full",
        catalog_size=20,
        call_rendered=True,
        context_chars=0,
        unscored_reason=None if verdicts else "x",
    )


def test_votes_in_words_name_and_quote_the_dissent():
    from analysis.findings import votes_in_words

    assert votes_in_words(_votes("incorrect", "incorrect", "incorrect")) == (
        "0 of 3 judges said correct."
    )
    assert votes_in_words(_votes("correct", "correct", "incorrect")) == (
        '2 of 3 judges said correct; the dissent, judge 3, said incorrect: "judge says '
        'incorrect because of reasons".'
    )
    assert votes_in_words(_votes("correct", "incorrect", "incorrect")) == (
        '1 of 3 judges said correct; the dissent, judge 1, said correct: "judge says correct '
        'because of reasons".'
    )
    assert votes_in_words(_votes("correct", "incorrect", discarded=1)) == (
        '1 of 2 judges said correct; evenly split, judge 2, said incorrect: "judge says '
        'incorrect because of reasons"; 1 of 3 votes discarded (no usable verdict).'
    )
    assert votes_in_words(_votes(discarded=3)) == "No valid vote (x): unscored, not 0."
    assert votes_in_words(None) == "Not judged under this condition."


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("claude-sonnet-4-5", "Claude"),
        ("us.anthropic.claude-3-5-haiku-20241022-v1:0", "Claude"),
        ("gpt-4o", "GPT"),
        ("openai/gpt-4.1-mini", "GPT"),
        ("o3", "GPT"),
        ("gemini-2.5-pro", "Gemini"),
        ("external", None),
        ("illustrative (not a live model)", None),
        (None, None),
    ],
)
def test_model_family(model, family):
    from analysis.findings import model_family

    assert model_family(model) == family


def test_self_preference_is_a_documented_code():
    from analysis.findings import CODES

    assert "SELF_PREFERENCE" in CODES


SELF_CONTAINED_ASKS = [
    "start phoenix in background",
    "Implement spotter-gqc",
    "Show me src/app.py",
    "Where is parse_config defined?",
    "Run the payment tests",
    "/review-tests payments",
    "create a file named notes.md listing the three biggest modules",
]
REFERRING_ASKS = [
    "yes",
    "yes do #1",
    "did you push?",
    "the same for the other file",
    "fix it",
    "try again",
    "ok go ahead",
    "do it like before",
]


def test_context_dependent_asks_are_those_that_refer_back(corpus):
    """Read by a person: of the real Claude Code sessions' asks, three refer back ("yes",
    "yes do #1", "did you push?"); short self-contained asks are not flagged."""
    from analysis.findings import is_context_dependent

    assert not [ask for ask in SELF_CONTAINED_ASKS if is_context_dependent(ask)]
    assert all(is_context_dependent(ask) for ask in REFERRING_ASKS)
    asks = {t.ask for s in analysis.load([corpus / "claude-code"]).sessions for t in s.turns}
    flagged = {ask for ask in asks if is_context_dependent(ask)}
    assert flagged == {"yes", "yes do #1", "did you push?"} & asks
    assert "start phoenix in background" in asks  # the first ask once flagged


def test_a_first_ask_that_refers_back_says_the_session_does_not_contain_it():
    session = analysis.load([analysis.sample_data_dir() / "transcripts"]).sessions[0]
    first = session.turns[0].model_copy(update={"ask": "yes do #1"})
    session = session.model_copy(update={"turns": [first, *session.turns[1:]]})
    (finding,) = [f for f in collect_findings([session]) if f.code == "CONTEXT_DEPENDENT_ASK"]
    assert finding.turn_index == 0
    assert "refers to something this session does not contain" in finding.message
    assert "earlier turn" not in finding.message.split(":")[0]


def test_a_folder_s_judgments_count_alike_in_tsq_lint_both_ways_and_in_the_app(tmp_path):
    """The judgments a folder holds (``*.judgments.jsonl``) are read by ``tsq lint`` through
    the index and without it, as by the workbench: the same findings, those about judgments
    among them."""
    from click.testing import CliRunner

    from analysis.cli import cli
    from analysis.index import Collection
    from workbench import Workspace

    folder = str(analysis.sample_data_dir())
    index = tmp_path / "index.duckdb"
    runs = [
        CliRunner().invoke(cli, ["lint", folder, "--json", *options])
        for options in (["--index", str(index)], ["--no-index"])
    ]
    for run in runs:
        assert run.exit_code == 0, run.output
    through_index, direct = (json.loads(run.stdout)["findings"] for run in runs)
    assert through_index == direct
    codes = {f["code"] for f in direct}
    assert "UNIFORM_SESSION_SCORES" in codes  # a finding about the judgments themselves
    app = Workspace(Collection([folder], index), fresh=[]).findings_frame
    assert app.to_dicts() == direct
