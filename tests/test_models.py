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
