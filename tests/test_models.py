"""The data model round-trips losslessly, and the columnar views agree with the raw lines."""

from __future__ import annotations

from collections import Counter

from test_corpus_conformance import claude_files, expected_counts

import analysis


def test_every_session_round_trips_through_json(corpus):
    loaded = analysis.load([corpus / "claude-code", corpus / "tau-bench"], max_result_chars=None)
    assert len(loaded.sessions) == 207
    for session in loaded.sessions:
        again = analysis.Session.model_validate_json(session.model_dump_json())
        assert again == session


def test_load_result_round_trips_with_catalogs_and_issues(tmp_path, write_jsonl):
    write_jsonl(
        [
            '{"type":"user","sessionId":"s","uuid":"u","message":{"role":"user","content":"hi"}}',
            "{x",
        ]
    )
    (tmp_path / "tools.json").write_text(
        '[{"name": "Read", "description": "d", "input_schema": {}}]'
    )
    loaded = analysis.load([tmp_path])
    assert loaded.catalogs
    assert loaded.all_issues()
    assert analysis.LoadResult.model_validate_json(loaded.model_dump_json()) == loaded


def test_frames_agree_with_counts_from_raw_lines(corpus):
    files = claude_files(corpus)
    loaded = analysis.load(files)
    turns = analysis.turns_frame(loaded.sessions)
    calls = analysis.views.tool_calls_frame(loaded.sessions)
    sessions = analysis.sessions_frame(loaded.sessions)
    expected = [expected_counts(path) for path in files]
    assert turns.height == sum(n for n, _, _ in expected)
    main = calls.filter(~calls["is_subagent"])
    sub = calls.filter(calls["is_subagent"])
    assert Counter(main["tool"].to_list()) == sum((c for _, c, _ in expected), Counter())
    assert Counter(sub["tool"].to_list()) == sum((s for _, _, s in expected), Counter())
    assert sessions["tool_calls"].sum() == main.height
    assert sessions["subagent_tool_calls"].sum() == sub.height
    assert turns["tool_calls"].sum() == main.height


def test_long_results_are_cut_and_keep_their_length(write_jsonl):
    body = "x" * 10_000
    path = write_jsonl(
        [
            '{"type":"user","sessionId":"s","uuid":"u1","message":{"role":"user","content":"go"}}',
            '{"type":"assistant","sessionId":"s","uuid":"a1","message":{"id":"m","role":"assistant",'
            '"content":[{"type":"tool_use","id":"t","name":"Read","input":{}}]}}',
            '{"type":"user","sessionId":"s","uuid":"r1","message":{"role":"user","content":'
            '[{"type":"tool_result","tool_use_id":"t","content":"' + body + '"}]}}',
        ]
    )
    cut = next(analysis.load([path], max_result_chars=100).sessions[0].tool_calls()).result
    assert (len(cut.content), cut.truncated_from) == (100, 10_000)
    whole = next(analysis.load([path], max_result_chars=None).sessions[0].tool_calls()).result
    assert (whole.content, whole.truncated_from) == (body, None)


def test_one_verdict_everywhere_a_step_is_named(loaded):
    """A judgment's verdict (correct when every valid vote said so, incorrect when none did,
    split between, unscored without a vote) is the word the step tables, the OTel export's
    label and the split-vote finding use."""
    from analysis.export import evaluation_attributes
    from analysis.views import step_table

    result, findings = loaded
    expected = {0.0: "incorrect", 1.0: "correct", None: "unscored"}
    seen = set()
    for j in result.judgments:
        words = expected.get(j.score, "split")
        assert j.verdict == words
        seen.add(words)
        attributes = evaluation_attributes(j, None)
        assert (attributes or {}).get("gen_ai.evaluation.score.label", "unscored") == words
    assert seen >= {"correct", "incorrect", "split"}
    split_findings = {
        (f.session_id, f.turn_index, f.step_index, f.condition)
        for f in findings
        if f.code == "SPLIT_VOTE"
    }
    assert split_findings == {
        (j.session_id, j.turn_index, j.step_index, j.condition)
        for j in result.judgments
        if j.verdict == "split"
    }
    for session in result.sessions:
        steps = step_table(session, result.judgments, findings)
        for row in steps.filter(steps["score"].is_not_null()).iter_rows(named=True):
            assert row["verdict_kind"] == expected.get(row["score"], "split")
