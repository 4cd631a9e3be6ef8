"""Endpoints and specs that would break a judge run, with the real SDKs against
loopback servers that misbehave on purpose.

- An endpoint that answers HTTP 200 with a body that is not the API's JSON (a proxy's login
  page, an answer cut off halfway, another service's JSON) fails that vote, which is asked
  again and then left unscored with its reason; the other steps are judged and written.
- ``tsq judge --dry-run`` refuses what the run refuses before any request, in the same sentence.
- A spec whose request cannot fit the model's context is refused by the estimate, before any
  request.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess

import conftest
import pytest
from fake_anthropic import NOT_JSON_FAULTS, FakeAnthropic
from fake_openai import FakeOpenAI
from pydantic import BaseModel

import analysis
from analysis.judge import JudgeConfig, estimate_run, judge_rendered
from analysis.llm import LLMClient, LLMConfig, LLMError, StructuredRequest, tool_for

API_KEY = "test-key"  # both fake servers' key
KEY_ENVS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")
SEED = analysis.sample_data_dir() / "transcripts" / "bad-choices.synthetic.jsonl"
SERVERS = {
    "anthropic": (FakeAnthropic, "claude-judge-4-5"),
    "openai": (FakeOpenAI, "openai:gpt-4o-judge"),
}
NOT_JSON = "answered HTTP 200 with a body that is not the API's JSON"


class Number(BaseModel):
    value: int
    why: str


REQUEST = StructuredRequest(
    system="Pick a number.",
    prompt="Any number will do.",
    tool=tool_for(Number, "record_number", "Record the number and why."),
)


@pytest.fixture(params=sorted(SERVERS))
def server(request):
    """Each API's fake server, with the model the judge names on it."""
    kind, model = SERVERS[request.param]
    with kind() as fake:
        fake.script.answers = {"record_number": {"value": 7, "why": "lucky"}}
        yield fake, model


def tsq(*args: str) -> subprocess.CompletedProcess[str]:
    """``tsq``, with the fake servers' key and no key of the user's."""
    keys: dict[str, str | None] = dict.fromkeys(KEY_ENVS)
    return conftest.tsq(*args, env=keys | {"ANTHROPIC_API_KEY": API_KEY, "OPENAI_API_KEY": API_KEY})


def one_sentence(done: subprocess.CompletedProcess[str]) -> str:
    """The one line a refused run prints on stderr (exit 2, no traceback)."""
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


# --- defect 4: HTTP 200 with a body that is not the API's JSON ------------------------------


def ask(fake, model, tmp_path):
    config = LLMConfig(
        model=model, base_url=fake.url, api_key=API_KEY, max_retries=1, cache_dir=tmp_path
    )

    async def run():
        async with LLMClient(config) as client:
            await client.resolve_model()
            return await client.ask_structured(REQUEST, Number)

    return asyncio.run(run())


@pytest.mark.parametrize("fault", NOT_JSON_FAULTS)
def test_an_answer_that_is_not_the_apis_json_is_asked_again_then_failed(server, fault, tmp_path):
    fake, model = server
    fake.script.faults = [fault] * 3  # every attempt (3 by default)
    answer = ask(fake, model, tmp_path)
    assert answer.value is None
    assert answer.failure == f"the endpoint at {fake.url} {NOT_JSON} (3 attempts)"
    assert answer.asked == 3
    assert len(fake.script.messages) == 3
    fake.script.faults = [fault]  # once, then the API's answer: the second attempt counts
    answer = ask(fake, model, tmp_path)
    assert (answer.value, answer.asked, answer.failure) == (Number(value=7, why="lucky"), 2, None)


@pytest.mark.parametrize("fault", NOT_JSON_FAULTS)
def test_a_models_list_that_is_not_the_apis_json_is_one_sentence(server, fault, tmp_path):
    fake, model = server
    fake.script.models_fault = fault
    with pytest.raises(LLMError) as caught:
        ask(fake, model, tmp_path)
    message = str(caught.value)
    assert message.startswith("The ")
    assert message.endswith(".")
    assert f"API at {fake.url} {NOT_JSON}" in message
    assert "\n" not in message
    assert fake.script.messages == []  # no vote asked


def test_cli_judge_writes_every_step_when_two_steps_get_no_json(server, tmp_path):
    """One step's every request gets a proxy's login page, another's an answer cut off halfway:
    those two are unscored with the reason, the other two are scored, and --out holds all four."""
    fake, model = server
    fake.script.not_json_for = {
        "## Current user request\nWhat git branch": "html_body",
        "## Current user request\nDelete this stale lock": "truncated_json",
    }
    out = tmp_path / "judgments.jsonl"
    done = tsq(
        "judge",
        str(SEED),
        "--model",
        model,
        "--base-url",
        fake.url,
        "--out",
        str(out),
        "--cache-dir",
        str(tmp_path / "cache"),
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["turn_index"] for line in lines] == [0, 1, 2, 3]  # one step a turn
    reason = f"the endpoint at {fake.url} {NOT_JSON} (3 attempts)"
    # the seed's story under the full menu: Read for a file's contents is right, the rest wrong
    assert [line["score"] for line in lines] == [1.0, None, None, 0.0]
    assert [line["unscored_reason"] for line in lines] == [None, reason, reason, None]
    assert [line["n_valid"] for line in lines] == [3, 0, 0, 3]
    # 3 votes, each asked 3 times, for each of the two steps, and 3 votes for each other step
    assert len(fake.script.messages) == 2 * 3 * 3 + 2 * 3
    assert f"Wrote 4 judgments to {out}" in done.stdout


def test_cli_judge_stops_in_one_sentence_when_the_models_list_is_not_json(server, tmp_path):
    fake, model = server
    fake.script.models_fault = "html_body"
    out = tmp_path / "judgments.jsonl"
    done = tsq("judge", str(SEED), "--model", model, "--base-url", fake.url, "--out", str(out))
    assert NOT_JSON in one_sentence(done)
    assert fake.script.messages == []
    assert not out.exists()


# --- defect 7: the dry run refuses what the run refuses -------------------------------------

REFUSED_BEFORE_ANY_REQUEST = {
    "unknown provider": (("--model", "bogus:foo"), "Unknown model provider 'bogus'"),
    "no model id": (("--model", "openai:"), "No model id after 'openai'"),
    "batch without a batch API": (
        ("--model", "openai:gpt-4o-judge", "--batch"),
        "Batch mode is not available for openai",
    ),
    "a spec's unknown provider": (("--judge", "SPEC"), "Unknown model provider 'bogus'"),
}


@pytest.mark.parametrize("case", sorted(REFUSED_BEFORE_ANY_REQUEST))
def test_the_dry_run_refuses_what_the_run_refuses_in_the_same_sentence(case, tmp_path):
    args, expected = REFUSED_BEFORE_ANY_REQUEST[case]
    spec = tmp_path / "bogus.judge.toml"
    spec.write_text('name = "bogus"\nmodel = "bogus:foo"\nrubric = "Judge the tool choice."\n')
    args = tuple(str(spec) if arg == "SPEC" else arg for arg in args)
    out = tmp_path / "judgments.jsonl"
    with FakeAnthropic() as fake:
        common = ("judge", str(SEED), *args, "--base-url", fake.url)
        dry = one_sentence(tsq(*common, "--dry-run"))
        real = one_sentence(tsq(*common, "--out", str(out), "--cache-dir", str(tmp_path)))
        assert fake.requests_seen == 0
    assert dry == real
    assert expected in dry
    assert not out.exists()


# --- defect 10: a request that cannot fit the model's context -------------------------------

WORDS = "Judge the tool choice with care. "
TEN_MB = 10_000_000


def rubric_of(chars: int) -> str:
    return (WORDS * (chars // len(WORDS) + 1))[:chars]


def huge_spec(tmp_path, chars: int, model: str = "claude-judge-4-5"):
    """A spec whose inline rubric is ``chars`` characters long."""
    path = tmp_path / "huge.judge.toml"
    path.write_text(f'name = "huge"\nmodel = "{model}"\nrubric = """\n{rubric_of(chars)}\n"""\n')
    return path


def refused_alike(tmp_path, spec) -> str:
    """The sentence both the dry run and the run of ``spec`` stop with, before any request."""
    out = tmp_path / "judgments.jsonl"
    with FakeAnthropic() as fake:
        common = ("judge", str(SEED), "--judge", str(spec), "--base-url", fake.url)
        dry = one_sentence(tsq(*common, "--dry-run"))
        real = one_sentence(tsq(*common, "--out", str(out), "--cache-dir", str(tmp_path)))
        assert fake.requests_seen == 0  # not even the models list
    assert dry == real
    assert not out.exists()
    return dry


def tokens_in(sentence: str) -> int:
    return int(re.search(r"about ([\d,]+) input tokens", sentence).group(1).replace(",", ""))


def test_a_ten_megabyte_rubric_is_refused_before_any_request(tmp_path):
    """(The spec reader refuses a spec file this large before any estimate, since 482705e.)"""
    refused_alike(tmp_path, huge_spec(tmp_path, TEN_MB))


def test_a_rubric_beyond_the_models_context_is_refused_before_any_request(tmp_path):
    """900,000 characters, about 225,000 tokens: a spec file the reader takes, beyond the
    200,000 tokens a Claude model (Haiku here) takes."""
    sentence = refused_alike(tmp_path, huge_spec(tmp_path, 900_000, "claude-haiku-judge-3"))
    assert sentence.startswith("Not started: a request would need about ")
    assert "the 200,000-token context of claude-haiku-judge-3" in sentence
    # at about 4 characters a token; the seed's steps and menu add a few thousand characters
    assert 900_000 // 4 < tokens_in(sentence) < (900_000 + 20_000) // 4


@pytest.mark.parametrize(
    ("model", "refused_by"),
    [
        ("openai:gpt-4o-judge", "the 128,000-token context of openai:gpt-4o-judge"),
        ("gemini:gemini-2.5-flash-judge", None),  # Gemini 2.5 takes 1,048,576 tokens
    ],
)
def test_the_context_is_the_one_stated_for_the_models_family(model, refused_by, tmp_path):
    """The same 900,000 characters: more than GPT-4o's 128,000 tokens, less than Gemini 2.5's
    1,048,576 (as their makers state them)."""
    done = tsq("judge", str(SEED), "--judge", str(huge_spec(tmp_path, 900_000, model)), "--dry-run")
    if refused_by is None:
        assert done.returncode == 0, done.stderr
        assert "4 steps x 3 votes = 12 requests" in done.stdout
    else:
        assert refused_by in one_sentence(done)


def test_the_estimate_carries_the_refusal_the_judge_page_shows(tmp_path):
    """A 10 MB rubric given to the estimate and the run directly (the Judge page's way), for a
    model of no stated context: beyond the 1,048,576 tokens assumed for it."""
    units = analysis.judge_inputs(analysis.load([SEED]).sessions)
    assert estimate_run(units, 3, "claude-judge-4-5").refusal is None
    huge = rubric_of(TEN_MB)
    refusal = estimate_run(units, 3, "claude-judge-4-5", huge).refusal
    assert refusal is not None
    assert refusal.startswith("Not started: a request would need about ")
    assert "the 1,048,576-token context assumed for claude-judge-4-5" in refusal
    assert TEN_MB // 4 < tokens_in(refusal) < (TEN_MB + 20_000) // 4
    unknown = estimate_run(units, 3, "bogus:foo").refusal
    assert unknown is not None
    assert unknown.startswith("Unknown model provider 'bogus'")
    # the run refuses the same, before any request
    with FakeAnthropic() as fake:
        config = JudgeConfig(
            model="claude-judge-4-5",
            base_url=fake.url,
            api_key=API_KEY,
            system=huge,
            cache_dir=tmp_path,
        )
        with pytest.raises(LLMError) as caught:
            asyncio.run(judge_rendered(units, config))
        assert fake.requests_seen == 0
    assert str(caught.value) == refusal


@pytest.mark.usefixtures("fresh_app")
def test_the_judge_page_refuses_a_spec_beyond_the_models_context_before_any_request(tmp_path):
    from conftest import BAD, open_page, plain

    spec = huge_spec(tmp_path, 900_000, "claude-haiku-judge-3")
    at = open_page("pages/judge.py", session=BAD)
    at.file_uploader(key="judge_spec_file").set_value(
        [("huge.judge.toml", spec.read_bytes(), "application/toml")]
    ).run()
    assert not at.exception
    (error,) = at.error
    said = plain(error.value)
    assert said.startswith("Not started: a request would need about ")
    assert "the 200,000-token context of claude-haiku-judge-3" in said
    assert "judge_run" not in [b.key for b in at.button]


def test_tsq_align_dry_run_refuses_a_spec_beyond_the_models_context(tmp_path, monkeypatch):
    monkeypatch.setenv("TSQ_DATA_DIR", str(tmp_path / "data"))
    alignment = analysis.sample_data_dir() / "alignment"
    spec = huge_spec(tmp_path, 900_000, "claude-haiku-judge-3")
    labels = str(alignment / "labels.csv")
    done = tsq("align", str(alignment / "transcripts"), "--labels", labels, "--judge", str(spec))
    assert "Not started" in done.stderr  # the run refuses it (through the judge) ...
    done = tsq("align", str(alignment / "transcripts"), "--labels", labels, "--judge", str(spec),
               "--dry-run")  # fmt: skip
    said = one_sentence(done)  # ... and so does its dry run, in the same words
    assert said.startswith("Not started: a request would need about ")
