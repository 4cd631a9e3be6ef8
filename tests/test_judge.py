"""ChainPoll judge, with the real SDK against a local server that misbehaves on purpose."""

from __future__ import annotations

import asyncio
import json

import pytest
from conftest import BAD, assert_seed_ablation_contract
from fake_anthropic import API_KEY, FakeAnthropic, prompt_of

import analysis
from analysis.judge import JudgeConfig, judge_rendered
from analysis.llm import LLMError
from analysis.render import render_turn


@pytest.fixture
def fake():
    with FakeAnthropic() as server:
        yield server


@pytest.fixture
def bad_choices():
    loaded = analysis.load([analysis.sample_data_dir() / "transcripts"])
    return next(s for s in loaded.sessions if s.session_id == BAD)


def config(fake, tmp_path, **overrides):
    values = {
        "model": "claude-judge-4-5",
        "base_url": fake.url,
        "api_key": API_KEY,
        "cache_dir": tmp_path / "cache",
        "max_retries": 3,
    }
    values.update(overrides)
    return JudgeConfig(**values)


def run(turns, cfg):
    return asyncio.run(judge_rendered(turns, cfg))


def test_the_seeds_story_in_three_conditions(fake, tmp_path, bad_choices):
    scores = {}
    for condition in ("bare", "catalog_no_call", "full"):
        turns = [render_turn(bad_choices, t, condition) for t in bad_choices.turns]
        judgments, _ = run(turns, config(fake, tmp_path, cache_dir=tmp_path / condition))
        scores[condition] = [j.score for j in judgments]
        assert all(j.condition == condition for j in judgments)
    assert scores["bare"] == [1.0, 1.0, 1.0, 1.0]
    assert scores["catalog_no_call"] == [0.0, 0.0, 0.0, 0.0]
    assert scores["full"] == [1.0, 0.0, 0.0, 0.0]
    assert sum(scores["full"]) / 4 == 0.25


def test_every_request_carries_the_whole_catalog_and_the_rendered_call(fake, tmp_path, bad_choices):
    turn = bad_choices.turns[1]
    run([render_turn(bad_choices, turn)], config(fake, tmp_path))
    assert len(fake.script.messages) == 3
    for body in fake.script.messages:
        prompt = prompt_of(body)
        for tool in analysis.catalog.baseline_catalog().tools:
            assert f"- {tool.name}: {tool.description}" in prompt
        assert 'WebSearch(query="how to find current git branch")' in prompt
        assert body["tool_choice"] == {"type": "tool", "name": "record_verdict"}
        assert "Did the request need a tool at all?" in body["system"]


def test_split_votes_score_between_zero_and_one(fake, tmp_path, bad_choices):
    fake.script.split_ask = "Show me the contents"
    (judgment,), _ = run([render_turn(bad_choices, bad_choices.turns[0])], config(fake, tmp_path))
    assert [v.verdict for v in judgment.votes].count("correct") == 2
    assert judgment.score == pytest.approx(2 / 3)
    assert (judgment.n_requested, judgment.n_valid, judgment.n_discarded) == (3, 3, 0)


@pytest.mark.slow
def test_overload_and_rate_limits_are_retried(fake, tmp_path, bad_choices):
    fake.script.faults = ["overloaded", "rate_limited", "server_error"]
    (judgment,), stats = run(
        [render_turn(bad_choices, bad_choices.turns[0])], config(fake, tmp_path, concurrency=1)
    )
    assert judgment.score == 1.0
    assert judgment.n_valid == 3
    assert len(fake.script.messages) == 6  # three faults, then three answers
    assert stats.http_requests == 1 + 6  # the models list, then every messages request
    gaps = [
        b - a
        for a, b in zip(fake.script.request_times, fake.script.request_times[1:], strict=False)
    ]
    assert gaps[1] >= 0.9  # retry-after: 1 was honoured after the 429


def test_malformed_votes_are_asked_again_then_discarded(fake, tmp_path, bad_choices):
    fake.script.faults = ["no_verdict", "bad_verdict"]
    cfg = config(fake, tmp_path, votes=1, attempts_per_vote=3)
    (judgment,), _ = run([render_turn(bad_choices, bad_choices.turns[0])], cfg)
    assert (judgment.score, judgment.n_valid, judgment.n_discarded) == (1.0, 1, 0)
    assert len(fake.script.messages) == 3

    fake.script.faults = ["missing_fields"] * 2 + ["bad_verdict"] * 4
    cfg = config(
        fake, tmp_path, votes=2, attempts_per_vote=3, cache_dir=tmp_path / "fresh", concurrency=1
    )
    (judgment,), _ = run([render_turn(bad_choices, bad_choices.turns[1])], cfg)
    assert judgment.score is None  # unscored, never 0 or 1
    assert (judgment.n_valid, judgment.n_discarded) == (0, 2)
    assert judgment.unscored_reason == "no valid verdict in 3 attempts"


def test_a_rerun_hits_the_cache_and_makes_no_request(fake, tmp_path, bad_choices):
    turns = [render_turn(bad_choices, t) for t in bad_choices.turns]
    first, _ = run(turns, config(fake, tmp_path))
    made = len(fake.script.messages)
    assert made == 12
    again, stats = run(turns, config(fake, tmp_path))
    assert len(fake.script.messages) == made
    assert stats.cache_hits == 12
    assert [j.score for j in again] == [j.score for j in first]


def test_model_by_display_name_and_unknown_model(fake, tmp_path, bad_choices):
    turns = [render_turn(bad_choices, bad_choices.turns[0])]
    (judgment,), _ = run(turns, config(fake, tmp_path, model="Claude Judge 4.5"))
    assert judgment.model == "claude-judge-4-5"
    with pytest.raises(
        LLMError, match=r"Unknown judge model 'claude-judge-4'.*closest: claude-judge-4-5"
    ):
        run(turns, config(fake, tmp_path, model="claude-judge-4"))
    assert fake.script.messages[-1]["model"] == "claude-judge-4-5"  # no vote for the bad name


def test_a_rejected_key_says_so(fake, tmp_path, bad_choices):
    turns = [render_turn(bad_choices, bad_choices.turns[0])]
    with pytest.raises(LLMError, match="The API key was rejected"):
        run(turns, config(fake, tmp_path, api_key="wrong"))
    assert fake.script.messages == []


def test_batch_mode_gives_the_same_output_as_direct_mode(fake, tmp_path, bad_choices):
    turns = [render_turn(bad_choices, t, c) for t in bad_choices.turns for c in ("bare", "full")]
    direct, _ = run(turns, config(fake, tmp_path, cache_dir=tmp_path / "direct"))
    fake.script.faults = ["no_verdict", "bad_verdict"]  # two votes of the first round re-asked
    cfg = config(fake, tmp_path, cache_dir=tmp_path / "batch", poll_seconds=0.01)
    batched, stats = asyncio.run(judge_rendered(turns, cfg, batch=True))
    tokens = {"usage", "cost_usd"}  # what each asked and paid differs: the same judgments else
    assert [j.model_dump(exclude=tokens) for j in batched] == [
        j.model_dump(exclude=tokens) for j in direct
    ]
    assert len(fake.script.batches) == 2  # a second round for the two malformed votes
    assert stats.votes_asked == 8 * 3 + 2


def _tsq(*args, env_key=API_KEY):
    from conftest import tsq

    return tsq(*args, env={"ANTHROPIC_API_KEY": env_key})


def test_cli_judge_ablation_writes_the_jsonl_contract(fake, tmp_path):
    import json

    out = tmp_path / "judgments.jsonl"
    sample = analysis.sample_data_dir() / "transcripts" / "bad-choices.synthetic.jsonl"
    done = _tsq(
        "judge",
        str(sample),
        "--model",
        "claude-judge-4-5",
        "--base-url",
        fake.url,
        "--ablation",
        "--out",
        str(out),
        "--cache-dir",
        str(tmp_path / "cache"),
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert_seed_ablation_contract(lines)
    assert "full: 4 steps in 4 turns, mean turn TSQ 0.25" in done.stdout
    assert lines[0]["votes"][0]["verdict"] in ("correct", "incorrect")
    raw = [json.loads(line) for line in sample.read_text().splitlines()]
    tool_responses = list(
        dict.fromkeys(
            r["message"]["id"]
            for r in raw
            if r["type"] == "assistant"
            and any(block["type"] == "tool_use" for block in r["message"]["content"])
        )
    )
    full = [line for line in lines if line["condition"] == "full"]
    assert [line["message_id"] for line in full] == tool_responses  # one step per turn here
    assert {line["step_index"] for line in full} == {0}


@pytest.mark.slow
def test_cli_judge_bad_model_and_bad_key_are_one_sentence(fake, tmp_path):
    sample = analysis.sample_data_dir() / "transcripts" / "bad-choices.synthetic.jsonl"
    common = (
        "--base-url",
        fake.url,
        "--out",
        str(tmp_path / "o.jsonl"),
        "--cache-dir",
        str(tmp_path),
    )
    wrong_model = _tsq("judge", str(sample), "--model", "claude-judgee", *common)
    assert wrong_model.returncode == 2
    assert "Unknown judge model 'claude-judgee'" in wrong_model.stderr
    assert "key" not in wrong_model.stderr.lower()
    wrong_key = _tsq("judge", str(sample), "--model", "claude-judge-4-5", *common, env_key="nope")
    assert wrong_key.returncode == 2
    assert "The API key was rejected" in wrong_key.stderr
    assert "Traceback" not in wrong_model.stderr + wrong_key.stderr


def test_a_slow_answer_times_out_and_is_retried(fake, tmp_path, bad_choices):
    fake.script.faults = ["slow"]
    cfg = config(fake, tmp_path, votes=1, timeout=1.0)
    (judgment,), stats = run([render_turn(bad_choices, bad_choices.turns[0])], cfg)
    assert judgment.score == 1.0
    assert len(fake.script.messages) == 2  # the slow one, then the retry
    assert stats.http_requests == 1 + 2


def test_a_model_the_messages_api_does_not_know_leaves_turns_unscored(fake, tmp_path, bad_choices):
    fake.script.retired = {"claude-haiku-judge-3"}
    cfg = config(fake, tmp_path, model="claude-haiku-judge-3", votes=2)
    (judgment,), _ = run([render_turn(bad_choices, bad_choices.turns[0])], cfg)
    assert judgment.score is None
    assert judgment.unscored_reason == "the API answered HTTP 404 after retries"
    assert len(fake.script.messages) == 2  # a 404 is not retried


def test_default_cache_honours_xdg_cache_home(tmp_path, monkeypatch):
    from analysis.judge import default_cache_dir

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "tsq-workbench"


@pytest.fixture
def rich():
    loaded = analysis.load([analysis.sample_data_dir() / "transcripts"])
    return max(loaded.sessions, key=lambda s: len(list(s.tool_calls())))


def test_steps_of_a_session_share_one_cached_prefix(fake, tmp_path, rich):
    units = analysis.judge_inputs([rich])
    assert len(units) > 2
    _, stats = run(units, config(fake, tmp_path, concurrency=1))
    requests = fake.script.messages
    assert len(requests) == 3 * len(units)
    menus = set()
    for body in requests:
        menu, step = body["messages"][0]["content"]
        assert menu["cache_control"] == {"type": "ephemeral"}
        assert "cache_control" not in step
        assert menu["text"].startswith("## Available tools (")
        menus.add(menu["text"])
    assert len(menus) == 1  # every step of the session sends the same prefix
    head = json.dumps(requests[0]["tools"]) + json.dumps(requests[0]["system"])
    prefix_tokens = len(head + menus.pop()) // 4
    assert stats.cache_write_tokens == prefix_tokens  # written once...
    assert stats.cache_read_tokens == (len(requests) - 1) * prefix_tokens  # ...then read


def test_batch_mode_judges_steps_like_direct_mode(fake, tmp_path, rich):
    units = analysis.judge_inputs([rich])
    direct, _ = run(units, config(fake, tmp_path, cache_dir=tmp_path / "direct"))
    cfg = config(fake, tmp_path, cache_dir=tmp_path / "batch", poll_seconds=0.01)
    batched, _ = asyncio.run(judge_rendered(units, cfg, batch=True))
    tokens = {"usage", "cost_usd"}  # what each asked and paid differs: the same judgments else
    assert [j.model_dump(exclude=tokens) for j in batched] == [
        j.model_dump(exclude=tokens) for j in direct
    ]
    assert [(j.turn_index, j.step_index) for j in direct] == [
        (u.turn_index, u.step_index) for u in units
    ]


def _judge_cli(fake, tmp_path, *extra, model="claude-haiku-judge-3"):
    sample = analysis.sample_data_dir() / "transcripts"
    return _tsq(
        "judge",
        str(sample),
        "--model",
        model,
        "--base-url",
        fake.url,
        "--cache-dir",
        str(tmp_path / "cache"),
        *extra,
    )


def test_dry_run_prints_the_estimate_and_makes_no_request(fake, tmp_path):
    done = _judge_cli(fake, tmp_path, "--dry-run")
    assert done.returncode == 0, done.stderr
    loaded = analysis.load([analysis.sample_data_dir() / "transcripts"])
    steps = sum(1 for s in loaded.sessions for t in s.turns for m in t.messages if m.tool_calls)
    headline = (
        f"{steps} steps x 3 votes = {3 * steps} requests (from {len(loaded.sessions)} sessions"
    )
    assert headline in done.stdout
    assert "with prompt caching" in done.stdout or "with it" in done.stdout
    assert "with --batch" in done.stdout
    assert fake.script.messages == []
    assert fake.requests_seen == 0  # not even the models list
    openai = _judge_cli(fake, tmp_path, "--dry-run", model="openai:gpt-4o")
    assert "(no --batch for this provider)" in openai.stdout
    assert "with --batch" not in openai.stdout


def test_dry_run_names_an_unknown_cost_once(fake, tmp_path):
    done = _judge_cli(fake, tmp_path, "--dry-run", model="claude-judge-4-5")
    assert done.returncode == 0, done.stderr
    assert "estimated cost: unknown (no price for this model)\n" in done.stdout
    assert done.stdout.count("unknown") == 1


@pytest.mark.slow
def test_max_cost_refuses_above_the_estimate(fake, tmp_path):
    import re

    dry = _judge_cli(fake, tmp_path, "--dry-run")
    cached = float(re.search(r"\$([\d.]+) with it", dry.stdout).group(1))
    out = str(tmp_path / "out.jsonl")
    refused = _judge_cli(fake, tmp_path, "--out", out, "--max-cost", f"{cached / 2}")
    assert refused.returncode == 2
    assert refused.stderr.strip().startswith("Not started: the estimated cost")
    assert len(refused.stderr.strip().splitlines()) == 1
    assert fake.script.messages == []
    allowed = _judge_cli(fake, tmp_path, "--out", out, "--max-cost", f"{cached * 2 + 0.01}")
    assert allowed.returncode == 0, allowed.stderr
    assert fake.script.messages
    unknown = _judge_cli(
        fake, tmp_path, "--out", out, "--max-cost", "100", model="claude-judge-4-5"
    )
    assert unknown.returncode == 2
    assert "unknown" in unknown.stderr


def test_step_selection_first_and_seeded_sample(rich):
    every = analysis.render.select_steps(rich)
    firsts = analysis.render.select_steps(rich, "first")
    expected_firsts = [
        (t.index, next(i for i, m in enumerate(t.messages) if m.tool_calls))
        for t in rich.turns
        if any(m.tool_calls for m in t.messages)
    ]
    assert [(s.turn.index, s.index) for s in firsts] == expected_firsts
    picked = [(s.turn.index, s.index) for s in analysis.render.select_steps(rich, "sample:2")]
    again = [(s.turn.index, s.index) for s in analysis.render.select_steps(rich, "sample:2")]
    assert picked == again
    assert len(picked) == 2
    assert set(picked) <= {(s.turn.index, s.index) for s in every}
    assert picked == sorted(picked)
    with pytest.raises(ValueError, match="not all, first or sample:N"):
        analysis.render.select_steps(rich, "sample:0")


@pytest.mark.slow
def test_cli_judge_timeout_gives_up_with_one_sentence_saying_it_timed_out(fake, tmp_path):
    import json

    fake.script.faults = ["slow"] * 40
    fake.script.slow_seconds = 3
    sample = analysis.sample_data_dir() / "transcripts" / "bad-choices.synthetic.jsonl"
    out = tmp_path / "o.jsonl"
    done = _tsq(
        "judge",
        str(sample),
        "--model",
        "claude-judge-4-5",
        "--base-url",
        fake.url,
        "--votes",
        "1",
        "--steps",
        "first",
        "--timeout",
        "1",
        "--out",
        str(out),
        "--cache-dir",
        str(tmp_path),
    )
    assert "Traceback" not in done.stderr
    assert f"the endpoint at {fake.url} timed out" in done.stderr + out.read_text()
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines
    assert all(line["score"] is None for line in lines)


def test_the_estimate_in_words_names_an_unknown_cost_once():
    from analysis.judge import RunEstimate

    def estimate(cost_usd: float | None, cost_cached_usd: float | None) -> str:
        return RunEstimate(
            units=4,
            sessions=1,
            tool_calls=4,
            requests=12,
            input_tokens=1_200,
            output_tokens=3_600,
            cached_prefix_tokens=0,
            cost_usd=cost_usd,
            cost_cached_usd=cost_cached_usd,
            cost_batch_usd=None,
        ).in_words("step", 3)

    priced = estimate(0.5, 0.25)
    assert "cost $0.50 ($0.25 with prompt caching). Assumes" in priced
    unpriced = estimate(None, None)
    assert unpriced.count("unknown") == 1
    assert "cost unknown (no price for this model). Assumes" in unpriced
