"""The Turn page shows a step as its judge read it: rendered with the options of the judgment's
own spec (the step budget the judge recorded, else its spec's where the workbench knows it),
never silently with the built-in spec's; and a step not judged says what judging it would
take with the spec the Judge page runs."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import open_app, plain, tsq, use_folder
from fake_anthropic import API_KEY, FakeAnthropic, prompt_of
from records import SESSION, assistant, result, text, tool_use, user
from streamlit.testing.v1 import AppTest

import analysis
from analysis.judge import read_spec, spec_toml
from analysis.render import RenderOptions, render_step

pytestmark = pytest.mark.usefixtures("fresh_app")

BUDGET = 4000
"""The team's spec's step budget: a long step is cut to it, and not to the default 12,000."""


def _long(subject: str) -> str:
    return " ".join(
        f"Candidate {n}: {subject}/retry_{n}.py may hold the retry policy." for n in range(45)
    )


def transcript() -> list[dict[str, Any]]:
    """One ask and two steps, each a long reasoning text before its call (some 2,400 chars):
    within 12,000 chars a step's output is kept whole, within 4,000 it is cut."""
    return [
        user("u1", "Where are the webhook retries configured?"),
        assistant("a1", "msg_1", text(_long("webhooks")), parent="u1"),
        assistant("a2", "msg_1", tool_use("t1", "Grep", pattern="retry"), parent="a1"),
        result("r1", "t1", "webhooks/retry_policy.py:12: MAX_RETRIES = 5", parent="a2"),
        assistant("a3", "msg_2", text(_long("payments")), parent="r1"),
        assistant(
            "a4", "msg_2", tool_use("t2", "Read", file_path="webhooks/retry_policy.py"), parent="a3"
        ),
        result("r2", "t2", "MAX_RETRIES = 5", parent="a4"),
        assistant("a5", "msg_3", text("Retries are set in webhooks/retry_policy.py."), parent="r2"),
    ]


@dataclass(frozen=True)
class Judged:
    """A folder holding the transcript, and the judgments ``tsq judge`` wrote for it."""

    spec: analysis.JudgeSpec
    transcript: Path
    lines: list[dict[str, Any]]
    """The judgments file's lines, as written."""
    prompts: list[str]
    """What the judge was sent, request by request."""


def _judge(base: Path, fake: FakeAnthropic, spec_file: Path, *extra: str) -> Judged:
    out = base / f"{len(extra)}.judgments.jsonl"
    done = tsq(
        "judge",
        str(base / "session.jsonl"),
        "--judge",
        str(spec_file),
        "--steps",
        "first",
        "--out",
        str(out),
        "--cache-dir",
        str(base / "cache"),
        *extra,
        env={"ANTHROPIC_API_KEY": API_KEY},
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    prompts = [prompt_of(body) for body in fake.script.messages]
    return Judged(read_spec(spec_file), base / "session.jsonl", lines, prompts)


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Judged]:
    """The first step judged by the team's spec (``step_chars = 4000``), by ``tsq judge``
    against a local Anthropic API; and again with a live catalog dump (one MCP tool more)."""
    base = tmp_path_factory.mktemp("team")
    lines = [json.dumps(record) for record in transcript()]
    (base / "session.jsonl").write_text("\n".join(lines) + "\n")
    runs = {}
    with FakeAnthropic() as fake:
        spec = analysis.default_spec().with_changes(
            name="team-judge", model="claude-judge-4-5", base_url=fake.url, step_chars=BUDGET
        )
        spec_file = base / "team.judge.toml"
        spec_file.write_text(spec_toml(spec))
        runs["team"] = _judge(base, fake, spec_file)
        fake.script.messages.clear()
        dump = base / "live.json"
        tool = {"name": "mcp__docs__search", "description": "Search the team's docs."}
        dump.write_text(json.dumps([{**tool, "input_schema": {"type": "object"}}]))
        runs["live"] = _judge(base, fake, spec_file, "--live-catalog", str(dump))
    return runs


def folder_with(tmp_path: Path, run: Judged, lines: list[dict[str, Any]]) -> Path:
    """A data folder: the transcript and these judgment lines."""
    folder = tmp_path / "data"
    folder.mkdir()
    shutil.copy(run.transcript, folder)
    body = "".join(json.dumps(line) + "\n" for line in lines)
    (folder / "team.judgments.jsonl").write_text(body)
    return folder


def turn_page(folder: Path, step: int) -> AppTest:
    at = use_folder(open_app(), folder)
    at.query_params["session"] = SESSION
    at.query_params["turn"] = "0"
    at.query_params["step"] = str(step)
    at.switch_page("pages/turn.py").run()
    assert not at.exception
    return at


def rendered(run: Judged, step: int, options: RenderOptions | None) -> Any:
    """The step as ``analysis.render`` renders it, under the full condition, with ``options``."""
    session = analysis.load([run.transcript]).sessions[0]
    return render_step(session, session.turns[0], step, "full", options=options)


def notices(at: AppTest) -> list[str]:
    return [t.value for t in at.text if t.value.startswith("Rendered with the built-in spec")]


def test_the_judge_records_its_step_budget(judged):
    lines = judged["team"].lines
    assert [(line["step_index"], line["step_chars"]) for line in lines] == [(0, BUDGET)]
    assert lines[0]["judge_id"] == judged["team"].spec.judge_id
    old = {key: value for key, value in lines[0].items() if key != "step_chars"}
    assert analysis.Judgment.model_validate(old).step_chars is None  # older files still load


def test_the_page_shows_the_step_as_a_judge_with_another_budget_read_it(judged, tmp_path):
    run = judged["team"]
    ours = rendered(run, 0, run.spec.render_options())
    default = rendered(run, 0, None)
    assert ours.output != default.output  # cut to 4,000, not to 12,000
    assert ours.cuts
    assert not default.cuts
    at = turn_page(folder_with(tmp_path, run, run.lines), 0)
    shown = [t.value for t in at.text]
    assert ours.output in shown
    assert default.output not in shown
    assert all(ours.output in prompt for prompt in run.prompts)  # what the judge was sent
    texts = [t.value for t in at.text]
    assert f"Within a step budget of 4,000 characters, cut to fit: {ours.cuts[0]}." in texts
    assert notices(at) == []


def test_a_judgment_whose_spec_is_not_loaded_says_so_in_one_line(judged, tmp_path):
    run = judged["team"]
    before = [{k: v for k, v in line.items() if k != "step_chars"} for line in run.lines]
    at = turn_page(folder_with(tmp_path, run, before), 0)
    assert notices(at) == [
        "Rendered with the built-in spec's options: the spec of judge "
        f"{run.spec.judge_id} is not loaded."
    ]
    assert rendered(run, 0, RenderOptions()).output in [t.value for t in at.text]


def test_the_built_in_spec_is_known_by_its_judge_id(judged, tmp_path):
    run = judged["team"]
    builtin = analysis.default_spec().judge_id
    before = [
        {**{k: v for k, v in line.items() if k != "step_chars"}, "judge_id": builtin}
        for line in run.lines
    ]
    at = turn_page(folder_with(tmp_path, run, before), 0)
    assert notices(at) == []
    assert rendered(run, 0, RenderOptions()).output in [t.value for t in at.text]


def test_a_judgment_from_before_judge_specs_says_its_budget_is_not_known(judged, tmp_path):
    run = judged["team"]
    before = [
        {**{k: v for k, v in line.items() if k != "step_chars"}, "judge_id": None}
        for line in run.lines
    ]
    at = turn_page(folder_with(tmp_path, run, before), 0)
    assert notices(at) == [
        "Rendered with the built-in spec's options: judge claude-judge-4-5 ran before judge "
        "specs and did not record its step budget."
    ]


def test_a_menu_the_page_cannot_rebuild_is_said(judged, tmp_path):
    run = judged["live"]
    shown = len(rendered(run, 0, run.spec.render_options()).tools)
    assert run.lines[0]["catalog_size"] == shown + 1  # the live dump's tool
    at = turn_page(folder_with(tmp_path, run, run.lines), 0)
    texts = [t.value for t in at.text]
    assert (
        f"The judge saw {shown + 1} tools on its menu and this one has {shown}: it was judged "
        "with a catalog that is not loaded here, such as a live dump."
    ) in texts
    assert notices(at) == []


def test_a_step_not_judged_is_estimated_with_the_judge_page_spec(judged, tmp_path):
    """Step 1 was not judged (``--steps first``): what judging it would take is the plan of
    the spec the Judge page runs (the built-in one, its whole 12,000-char budget), not that of
    the judgment's spec (4,000)."""
    run = judged["team"]
    builtin = analysis.default_spec()
    unit = rendered(run, 1, builtin.render_options())
    expected = analysis.judge.estimate_run(
        [unit], builtin.votes, builtin.model, builtin.system_text()
    )
    cut = analysis.judge.estimate_run(
        [rendered(run, 1, run.spec.render_options())],
        builtin.votes,
        builtin.model,
        builtin.system_text(),
    )
    assert cut.input_tokens < expected.input_tokens
    at = turn_page(folder_with(tmp_path, run, run.lines), 1)
    assert plain(at.subheader[1].value) == "Step 1"
    assert at.info[0].value == (
        "Not judged under the full condition. Judging this step with claude-sonnet-4-5: "
        + expected.in_words("step", builtin.votes)
    )
    assert unit.output in [t.value for t in at.text]  # what that judge would read
    assert notices(at) == []
