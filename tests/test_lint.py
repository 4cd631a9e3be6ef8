"""Diagnostics with stable codes: why a turn scored what it scored."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from records import assistant, text, tool_use, user

import analysis
from analysis._lint import lint
from analysis._models import TurnJudgment, Vote

BAD = "5eed0000-0000-4000-8000-000000000001"


def judgment(
    turn_index, score, condition="full", votes=None, requested=3, catalog=10, rendered=True
):
    votes = votes if votes is not None else [Vote(verdict="correct", reasoning="ok")] * 3
    return TurnJudgment(
        session_id=BAD,
        turn_index=turn_index,
        score=score,
        votes=votes,
        n_requested=requested,
        n_valid=len(votes),
        n_discarded=requested - len(votes),
        model="m",
        rubric_version="r",
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


def codes(findings, turn=None):
    return [f.code for f in findings if turn is None or f.turn_index == turn]


def test_a_plain_trace_has_no_catalog(bad_choices):
    findings = lint([bad_choices])
    assert codes(findings) == ["NO_CATALOG"] * 4
    assert all(f.severity == "error" for f in findings)


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
    findings = lint([bad_choices], judgments)
    assert codes(findings, 0) == ["NO_CATALOG", "SINGLE_TOOL_CATALOG"]
    assert codes(findings, 1) == ["NO_CATALOG", "CALL_NOT_RENDERED"]
    assert codes(findings, 2) == ["NO_CATALOG", "SPLIT_VOTE"]
    assert "2 of 3 judges" in next(f.message for f in findings if f.code == "SPLIT_VOTE")
    assert codes(findings, 3) == ["NO_CATALOG", "UNSCORED", "DISCARDED_VOTES"]
    assert "menu of one" in next(f.message for f in findings if f.code == "SINGLE_TOOL_CATALOG")


def test_uniform_scores_are_a_session_finding(bad_choices):
    findings = lint([bad_choices], [judgment(i, 1.0) for i in range(4)])
    (uniform,) = [f for f in findings if f.code == "UNIFORM_SESSION_SCORES"]
    assert uniform.turn_index is None
    assert "Every turn scored 1.0" in uniform.message


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
    findings = lint([session])
    # the init record is dated after the turn (the crafted records are dated 2026-02-11)
    assert codes(findings, 0) == [
        "SINGLE_TOOL_CATALOG",
        "CALLED_TOOL_NOT_IN_CATALOG",
        "RETROACTIVE_CATALOG",
    ]
    assert codes(findings, None)[-1] == "USED_TOOLS_MISSING_FROM_CATALOG"
    assert "CONTEXT_DEPENDENT_ASK" not in codes(findings, 1)  # "yes" has its context


def test_context_dependent_ask_without_context(write_jsonl):
    path = write_jsonl(
        [user("u1", "yes do #1"), assistant("a1", "m1", tool_use("t1", "Edit", file_path="a"))]
    )
    (session,) = analysis.load([path]).sessions
    assert "CONTEXT_DEPENDENT_ASK" in codes(lint([session]), 0)


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
        "code",
        "severity",
        "message",
    }
    assert [f["code"] for f in document["findings"] if f["turn_index"] == 2] == [
        "NO_CATALOG",
        "SPLIT_VOTE",
    ]


def test_judgments_exported_from_another_platform_load_through_a_mapping(tmp_path, bad_choices):
    from analysis._judgments import ExternalColumns, load_judgments

    export = tmp_path / "platform.csv"
    export.write_text(
        "conv,turn,tsq,why\n" + f"{BAD},1,0.0,web search for a local question\n" + f"{BAD},2,0.5,\n"
    )
    columns = ExternalColumns(session_id="conv", turn="turn", score="tsq", explanation="why")
    loaded = load_judgments(export, columns)
    assert [(j.turn_index, j.score) for j in loaded] == [(1, 0.0), (2, 0.5)]
    assert loaded[0].votes[0].reasoning == "web search for a local question"
    assert "SPLIT_VOTE" in codes(lint([bad_choices], loaded), 2)


def test_context_findings_agree_with_the_rendered_prior_context(corpus):
    from analysis._lint import is_context_dependent
    from analysis._render import RenderOptions, render_turn

    sessions = analysis.load([corpus / "tau-bench"]).sessions[:40]
    options = RenderOptions(context_chars=600)
    findings = lint(sessions, options=options)
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
    done = subprocess.run(
        [sys.executable, "-m", "analysis", "lint", str(sample), "--judgments", str(bad)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    (message,) = done.stderr.strip().splitlines()
    assert message.startswith(f"{bad}:2: not a judgment (")
    missing = subprocess.run(
        [sys.executable, "-m", "analysis", "lint", str(sample), "--judgments", str(tmp_path / "x")],
        capture_output=True,
        text=True,
    )
    assert (
        missing.stderr.strip() == f"{tmp_path / 'x'}: cannot be read (No such file or directory)."
    )
