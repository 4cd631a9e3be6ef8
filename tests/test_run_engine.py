"""``tsq judge`` and the Judge page run the judge through one pair of functions
(``analysis.judge.prepare_run`` and ``execute``), as ``tsq council`` and the page's Council
section run the council (``analysis.council.prepare_run`` and ``execute``): both callers, on the
same files against the loopback Anthropic server, send the same requests, keep the same
judgments (or labels) and refuse in the same sentence."""

from __future__ import annotations

import json
import re
import shutil
import tomllib
from collections import Counter
from pathlib import Path
from typing import Any

import fake_anthropic
import polars as pl
import pytest
from click.testing import CliRunner
from conftest import BAD, assert_seed_ablation_contract, open_page, plain, use_folder
from fake_anthropic import API_KEY, FakeAnthropic
from streamlit.testing.v1 import AppTest

import analysis
from analysis.cli import cli

SEED = analysis.sample_data_dir() / "transcripts" / "bad-choices.synthetic.jsonl"
FIELDS = analysis.study.default_config().fields
OPUS = "claude-opus-judge-4"

pytestmark = pytest.mark.usefixtures("fresh_app")


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    """The fake Anthropic API (with an Opus model too), its key set, and a folder of the
    seed's bad-choices session that both callers read."""
    opus = {"type": "model", "id": OPUS, "display_name": OPUS, "created_at": "2026-01-01T00:00:00Z"}
    monkeypatch.setattr(fake_anthropic, "MODELS", [*fake_anthropic.MODELS, opus])
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "page-cache"))  # the page's vote cache
    (tmp_path / "sessions").mkdir()
    shutil.copy(SEED, tmp_path / "sessions")
    with FakeAnthropic() as server:
        yield server


def tsq(*args: str) -> Any:
    """``tsq ARGS`` in this process, through click's runner (stdout and stderr apart)."""
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def judge_cli(tmp_path: Path, model: str, *extra: str) -> Any:
    return tsq(
        "judge",
        str(tmp_path / "sessions"),
        "--model",
        model,
        "--index",
        str(tmp_path / "index.duckdb"),
        "--cache-dir",
        str(tmp_path / "cli-cache"),
        *extra,
    )


def judge_page(tmp_path: Path, model: str, base_url: str) -> AppTest:
    """The Judge page on the same folder, the session chosen, the model and endpoint typed."""
    at = use_folder(open_page("pages/judge.py"), tmp_path / "sessions")
    at.multiselect(key="judge_sessions").set_value([BAD]).run()
    at.text_input(key="judge_model").set_value(model).run()
    at.text_input(key="judge_base_url").set_value(base_url).run()
    assert not at.exception
    return at


def asked(fake: FakeAnthropic) -> Counter[str]:
    """The request bodies the fake received, as a multiset; forgotten, with the prompt cache it
    keeps, so that the next caller meets the fake as the first did."""
    bodies = Counter(json.dumps(body, sort_keys=True) for body in fake.script.messages)
    fake.script.messages.clear()
    fake.cached_prefixes.clear()
    return bodies


def steps_of(transcript: Path) -> int:
    """The model responses that called a tool, counted in the file itself."""
    records = [json.loads(line) for line in transcript.read_text().splitlines()]
    return len(
        {
            r["message"]["id"]
            for r in records
            if r["type"] == "assistant"
            and any(block["type"] == "tool_use" for block in r["message"]["content"])
        }
    )


def one_line(done: Any) -> str:
    """The one sentence a refused command prints on stderr (exit 2)."""
    assert done.exit_code == 2, (done.stdout, done.stderr)
    (line,) = done.stderr.strip().splitlines()
    return str(line)


# The judge


@pytest.mark.slow
def test_tsq_judge_and_the_judge_page_ask_the_same_and_keep_the_same_judgments(fake, tmp_path):
    out = tmp_path / "judgments.jsonl"
    done = judge_cli(
        tmp_path, "claude-judge-4-5", "--base-url", fake.url, "--ablation", "--out", str(out)
    )
    assert done.exit_code == 0, done.stderr
    by_cli = asked(fake)
    at = judge_page(tmp_path, "claude-judge-4-5", fake.url)
    at.toggle(key="judge_ablation").set_value(True).run()
    at.button(key="judge_run").click().run()
    assert not at.exception
    assert not at.error
    by_page = asked(fake)

    assert sum(by_cli.values()) == steps_of(SEED) * 3 * 3  # steps x conditions x votes
    assert by_page == by_cli
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert_seed_ablation_contract(written)  # the fake's rule: full scores 1, 0, 0, 0
    kept = [j.model_dump(mode="json") for j in at.session_state["judge_results"]]
    ordered = sorted(written, key=json.dumps)
    assert sorted(kept, key=json.dumps) == ordered
    shown = [line.strip() for line in plain(at.success[0].value).splitlines()]
    printed = done.stdout.splitlines()
    after = next(n for n, line in enumerate(printed) if line.startswith("judge: ")) + 1
    assert len(shown) == 3 + 1  # a line per condition, then the votes and tokens
    assert shown == printed[after : after + len(shown)]


def test_a_cap_below_the_estimate_is_refused_in_the_same_sentence(fake, tmp_path):
    out = str(tmp_path / "judgments.jsonl")
    model = "claude-haiku-judge-3"  # priced as Haiku: $1 and $5 a million tokens
    dry = judge_cli(tmp_path, model, "--base-url", fake.url, "--dry-run")
    cost = re.search(r"(\$[\d.]+) with it", dry.stdout).group(1)
    assert float(cost[1:]) > 0.01
    refused = one_line(
        judge_cli(tmp_path, model, "--base-url", fake.url, "--out", out, "--max-cost", "0.01")
    )
    assert refused == (
        f"Not started: the estimated cost, {cost}, is above --max-cost $0.01 (see --dry-run)."
    )
    at = judge_page(tmp_path, model, fake.url)
    at.number_input(key="judge_max_cost").set_value(0.01).run()
    assert [plain(e.value) for e in at.error] == [refused]
    assert "judge_run" not in [b.key for b in at.button]
    at.number_input(key="judge_max_cost").set_value(1.0).run()  # above the estimate: it may run
    assert not at.error
    assert not at.button(key="judge_run").disabled
    assert fake.requests_seen == 0


def test_a_cap_over_an_unknown_cost_is_refused_in_the_same_sentence(fake, tmp_path):
    out = str(tmp_path / "judgments.jsonl")
    model = "claude-judge-4-5"  # no price is known for it
    refused = one_line(
        judge_cli(tmp_path, model, "--base-url", fake.url, "--out", out, "--max-cost", "100")
    )
    assert refused == (
        "Not started: the estimated cost, unknown (no price for this model), is above "
        "--max-cost $100.00 (see --dry-run)."
    )
    at = judge_page(tmp_path, model, fake.url)
    at.number_input(key="judge_max_cost").set_value(100.0).run()
    assert [plain(e.value) for e in at.error] == [refused]
    assert "judge_run" not in [b.key for b in at.button]
    assert fake.requests_seen == 0


def test_a_model_of_no_known_provider_is_refused_in_the_same_sentence(fake, tmp_path):
    refused = one_line(judge_cli(tmp_path, "bogus:foo", "--dry-run"))
    assert refused == (
        "Unknown model provider 'bogus' in 'bogus:foo': name a model as provider:model with "
        "anthropic, openai or gemini (a bare name is Anthropic's)."
    )
    at = judge_page(tmp_path, "claude-judge-4-5", fake.url)
    at.text_input(key="judge_model").set_value("bogus:foo").run()
    assert [plain(e.value) for e in at.error] == [refused]
    assert fake.requests_seen == 0


def test_a_model_the_api_does_not_list_is_refused_in_the_same_sentence(fake, tmp_path):
    out = str(tmp_path / "judgments.jsonl")
    refused = one_line(judge_cli(tmp_path, "claude-judgee", "--base-url", fake.url, "--out", out))
    assert refused.startswith("Unknown judge model 'claude-judgee'")
    assert "claude-judge-4-5" in refused  # the closest it lists
    at = judge_page(tmp_path, "claude-judgee", fake.url)
    at.button(key="judge_run").click().run()
    assert [plain(e.value) for e in at.error] == [refused]
    assert "judge_results" not in at.session_state
    assert fake.script.messages == []  # asked for the models only, never for a vote
    assert not Path(out).exists()


def huge_spec(model: str, votes: int, chars: int) -> bytes:
    rubric = ("Judge the tool choice with care. " * (chars // 33 + 1))[:chars]
    spec = analysis.default_spec(model).with_changes(rubric=rubric, votes=votes, name="costly")
    return analysis.judge.spec_toml(spec).encode()


@pytest.mark.slow
def test_the_judge_page_asks_before_spending_more_than_the_threshold(fake, tmp_path):
    """Opus ($15 and $75 a million tokens), a rubric of 400,000 characters (some 100,000
    tokens) and 10 votes: 40 requests of some $5.6 together with prompt caching."""
    spec = tmp_path / "costly.judge.toml"
    spec.write_bytes(huge_spec(OPUS, 10, 400_000))
    index = str(tmp_path / "index.duckdb")
    dry = tsq("judge", str(SEED), "--judge", str(spec), "--index", index, "--dry-run")
    assert dry.exit_code == 0, dry.stderr
    cost = re.search(r"(\$[\d.]+) with it", dry.stdout).group(1)
    assert float(cost[1:]) > analysis.judge.CONFIRM_ABOVE_USD == 5
    at = use_folder(open_page("pages/judge.py"), tmp_path / "sessions")
    at.multiselect(key="judge_sessions").set_value([BAD]).run()
    built_in = tomllib.loads(analysis.judge.default_spec_path().read_text())["model"]
    assert at.text_input(key="judge_model").value == built_in  # the model is the spec's
    at.file_uploader(key="judge_spec_file").set_value(
        [("costly.judge.toml", spec.read_bytes(), "application/toml")]
    ).run()
    assert at.text_input(key="judge_model").value == OPUS
    at.text_input(key="judge_base_url").set_value(fake.url).run()
    (confirm,) = at.checkbox
    requests = steps_of(SEED) * 10
    assert plain(confirm.label) == f"Spend about {cost} on {requests} requests"
    assert at.button(key="judge_run").disabled
    confirm.check().run()
    assert not at.button(key="judge_run").disabled
    at.button(key="judge_run").click().run()
    assert not at.exception
    assert len(fake.script.messages) == requests
    at.number_input(key="judge_max_cost").set_value(5.0).run()  # a cap below it: refused
    assert [plain(e.value) for e in at.error] == [
        f"Not started: the estimated cost, {cost}, is above --max-cost $5.00 (see --dry-run)."
    ]
    assert not at.checkbox


def test_the_strata_of_a_sample_are_the_index_dimensions():
    from typing import get_args

    strata, _ = get_args(analysis.judge.JudgeOptions.model_fields["strata"].annotation)  # or None
    assert get_args(strata) == analysis.index.DIMENSIONS


def test_a_refused_plan_is_run_by_no_one(fake, tmp_path):
    sessions = analysis.load([tmp_path / "sessions"]).sessions
    options = analysis.judge.JudgeOptions(max_cost=0.0)
    spec = analysis.default_spec("claude-haiku-judge-3").with_changes(base_url=fake.url)
    plan = analysis.judge.prepare_run(analysis.index.FromSessions(sessions), spec, options)
    assert plan.refusal is None
    assert plan.cost_refusal is not None
    outcome = analysis.judge.execute(plan)
    assert outcome.error == plan.cost_refusal
    assert outcome.judgments == []
    assert fake.requests_seen == 0


# The council


def council_config(tmp_path: Path, fake: FakeAnthropic) -> Path:
    """Two stage-1 judges and a chairman on the fake."""
    path = tmp_path / "council.toml"
    path.write_text(
        "[[stage1]]\n"
        f'model = "claude-judge-4-5"\nbase_url = "{fake.url}"\n'
        "[[stage1]]\n"
        f'model = "claude-haiku-judge-3"\nbase_url = "{fake.url}"\n'
        "[chairman]\n"
        f'model = "claude-judge-4-5"\nname = "chair"\nbase_url = "{fake.url}"\n'
    )
    return path


def council_page(tmp_path: Path, config: Path | None = None) -> AppTest:
    at = use_folder(open_page("pages/judge.py"), tmp_path / "sessions")
    at.multiselect(key="judge_sessions").set_value([BAD]).run()
    if config is not None:
        at.text_input(key="council_config").set_value(str(config)).run()
    assert not at.exception
    return at


@pytest.mark.slow
def test_tsq_council_and_the_council_section_ask_the_same_and_keep_the_same_labels(fake, tmp_path):
    answer = {
        spec.name: {"reasoning": f"on {spec.name}", "value": spec.values[0]} for spec in FIELDS
    }
    fake.script.answers = {"record_labels": answer, "record_council_labels": answer}
    config = council_config(tmp_path, fake)
    out = tmp_path / "labels.jsonl"
    done = tsq(
        "council",
        str(tmp_path / "sessions"),
        "--config",
        str(config),
        "--out",
        str(out),
        "--cache-dir",
        str(tmp_path / "cli-cache"),
    )
    assert done.exit_code == 0, done.stderr
    by_cli = asked(fake)
    at = council_page(tmp_path, config)
    at.button(key="council_run").click().run()
    assert not at.exception
    assert not at.error
    by_page = asked(fake)

    assert sum(by_cli.values()) == 1 * (2 + 1)  # one session: two stage-1 judges, the chairman
    assert by_page == by_cli
    columns = ["item_id", "rater", "rater_kind", "field", "value", "reasoning", "redundant_calls"]
    written = pl.read_ndjson(out).select(columns).sort(columns)
    kept = at.session_state["council_labels"].select(columns).sort(columns)
    assert kept.equals(written)
    assert written.height == 3 * len(FIELDS)
    assert set(written["rater"]) == {"claude-judge-4-5", "claude-haiku-judge-3", "chair"}
    first = {spec.name: spec.values[0] for spec in FIELDS}  # what the fake answers
    assert [first[f] for f in written["field"]] == written["value"].to_list()
    summary = done.stdout.splitlines()[0]
    assert summary in [line.strip() for line in plain(at.success[0].value).splitlines()]


def test_a_cap_below_the_council_estimate_is_refused_in_the_same_sentence(fake, tmp_path):
    example = analysis.council.example_config_path()  # the seed's line-up, every model priced
    refused = one_line(
        tsq(
            "council",
            str(tmp_path / "sessions"),
            "--config",
            str(example),
            "--out",
            str(tmp_path / "labels.csv"),
            "--max-cost",
            "0.001",
        )
    )
    assert re.fullmatch(
        r"Not started: the estimated cost, \$[\d.]+, is above --max-cost \$0\.00 "
        r"\(see --dry-run\)\.",
        refused,
    )
    at = council_page(tmp_path)
    at.number_input(key="council_max_cost").set_value(0.001).run()
    assert refused in [plain(e.value) for e in at.error]
    assert "council_run" not in [b.key for b in at.button]
    assert fake.requests_seen == 0


def test_the_council_section_asks_before_spending_more_than_the_threshold(monkeypatch, tmp_path):
    """Three Opus judges asked 10 times and an Opus chairman ($15 and $75 a million tokens) on
    the seed's four sessions: 124 requests of more than $5 together."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "a-key")  # no request is made
    judges = "".join(f'[[stage1]]\nmodel = "claude-opus-4-1"\nname = "{n}"\n' for n in "abc")
    config = tmp_path / "council.toml"
    config.write_text(f'votes = 10\n{judges}[chairman]\nmodel = "claude-opus-4-1"\n')
    transcripts = analysis.sample_data_dir() / "transcripts"
    dry = tsq("council", str(transcripts), "--config", str(config), "--dry-run")
    assert dry.exit_code == 0, dry.stderr
    cost = re.search(r"; cost (\$[\d,.]+)\. ", dry.stdout).group(1)
    assert float(cost[1:].replace(",", "")) > analysis.judge.CONFIRM_ABOVE_USD
    sessions = analysis.load([transcripts]).sessions
    at = open_page("pages/judge.py")
    at.multiselect(key="judge_sessions").set_value([s.session_id for s in sessions]).run()
    at.text_input(key="council_config").set_value(str(config)).run()
    assert not at.exception
    (confirm,) = at.checkbox
    assert plain(confirm.label) == f"Spend about {cost} on {len(sessions) * (3 * 10 + 1)} requests"
    assert at.button(key="council_run").disabled
    confirm.check().run()
    assert not at.button(key="council_run").disabled
