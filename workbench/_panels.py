"""What several pages draw: transcript text, calls, what the judge saw, votes, tables, chart
downloads, and what a run may cost (its cap, and served, what the visitor has spent today)."""

from __future__ import annotations

import json
import os
import re
import sqlite3
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import polars as pl
import streamlit as st

import analysis
from analysis.judge import LOCAL, AuditLog, CapError, SpendingCaps
from analysis.llm import dollars
from analysis.models import Condition, ScorerRecord, Step
from analysis.render import CONDITIONS, JudgeInput, judged_options
from workbench._source import serving, visitor
from workbench._text import inert

if TYPE_CHECKING:
    import altair as alt


def _scroll_height(text: str) -> int | Literal["content"]:
    """Long text scrolls in a box of its own instead of stretching the page."""
    return 360 if text.count("\n") > 18 or len(text) > 2500 else "content"


def transcript_text(text: str) -> None:
    """Transcript text as text, wrapped: short text inline, long text in a box of its own that
    scrolls. Not ``st.code``: its highlighter costs the browser about a tenth of a second a
    block even for plain text, a fifth of drawing a Turn page."""
    height = _scroll_height(text)
    if height == "content":
        st.text(text)
    else:
        with st.container(height=height):
            st.text(text)


def call_panel(call: analysis.ToolCall) -> None:
    """One call: its tool and input (as JSON), then its result as the page shows results
    (:func:`analysis.views.result_view`): formatted JSON or wrapped text, long ones in a box
    of their own, with their length."""
    st.markdown(f"**{inert(call.name)}** · call {inert(call.id)}")
    arguments = json.dumps(call.input, indent=2, ensure_ascii=False)
    st.code(arguments, language="json", wrap_lines=True, height=_scroll_height(arguments))
    view = analysis.views.result_view(call.result)
    st.caption(view.caption)
    if view.kind == "json":
        st.code(view.text, language="json", wrap_lines=True, height=_scroll_height(view.text))
    elif view.kind == "text" and view.text:
        transcript_text(view.text)


def _judged_input(
    session: analysis.Session, step: Step, judgment: analysis.Judgment, spec: analysis.JudgeSpec
) -> tuple[JudgeInput, list[str]]:
    """What ``judgment``'s judge read for ``step``, rendered again with the options it was
    rendered with (:func:`analysis.render.judged_options`: its recorded step budget, else the
    options of its spec where that is the built-in one or ``spec``), else with the built-in
    spec's; and a line for each way the input shown may not be the judge's: options not known,
    a menu of another size (a catalog not loaded here, such as a live dump)."""
    builtin = analysis.default_spec()
    known = {judge: each.render_options() for each in (builtin, spec) for judge in _judge_ids(each)}
    options = judged_options(judgment, known)
    rendered = analysis.render_step(
        session,
        step.turn,
        step.index,
        judgment.condition,
        options=options or builtin.render_options(),
        parent_call_id=step.parent_call_id,
    )
    notes = [] if options is not None else [_options_unknown(judgment)]
    if judgment.catalog_size != len(rendered.tools):
        notes.append(
            f"The judge saw {judgment.catalog_size} tools on its menu and this one has "
            f"{len(rendered.tools)}: it was judged with a catalog that is not loaded here, "
            "such as a live dump."
        )
    return rendered, notes


def _judge_ids(spec: analysis.JudgeSpec) -> list[str]:
    """The ``judge_id`` of ``spec`` under each condition (the hash covers the condition)."""
    return [spec.with_changes(condition=condition).judge_id for condition in CONDITIONS]


def _options_unknown(judgment: analysis.Judgment) -> str:
    """The line saying that a judgment's input is shown with the built-in spec's options."""
    if judgment.judge_id is None:
        return (
            "Rendered with the built-in spec's options: judge "
            f"{judgment.model} ran before judge specs and did not record its step budget."
        )
    return (
        "Rendered with the built-in spec's options: the spec of judge "
        f"{judgment.judge_id} is not loaded."
    )


def _unjudged_input(
    session: analysis.Session, step: Step, condition: Condition, spec: analysis.JudgeSpec
) -> tuple[JudgeInput, str]:
    """What ``spec``'s judge would read for ``step`` under ``condition`` and what judging it
    would take, in words: both from the run the Judge page plans for the session with that
    spec (``analysis.judge.prepare_run`` on ``analysis.index.FromSessions``, the ablation on
    for a condition that is not the spec's), the estimate that of the step's unit alone. Where
    the run cannot be planned, the step rendered with the spec's options and why."""
    options = analysis.judge.JudgeOptions(
        subagents=step.parent_call is not None,
        text_steps=not step.calls_tools,
        ablation=condition != spec.condition,
    )
    plan = analysis.judge.prepare_run(
        analysis.index.FromSessions([session]), spec, options, keys={}
    )
    place = (step.turn.index, step.index, step.parent_call_id, condition)
    units = [
        unit
        for unit in plan.units or []
        if (unit.turn_index, unit.step_index, unit.parent_call_id, unit.condition) == place
    ]
    if not units:
        rendered = analysis.render_step(
            session,
            step.turn,
            step.index,
            condition,
            options=spec.render_options(),
            parent_call_id=step.parent_call_id,
        )
        return rendered, plan.refusal or "The Judge page would not judge this step."
    estimate = analysis.judge.estimate_run(units, spec.votes, spec.model, spec.system_text())
    return units[0], estimate.refusal or estimate.in_words("step", spec.votes)


def judge_input_panel(
    session: analysis.Session,
    step: Step,
    condition: Condition,
    judgment: analysis.Judgment | None,
    judge: analysis.JudgeSpec,
) -> str | None:
    """What the judge read for ``step`` under ``condition``, part by part, as text, the menu
    first: for a step judged, what its ``judgment``'s judge read, after a line for each way
    the input shown may not be that (:func:`_judged_input`); for a step not judged, what
    ``judge`` (the spec the Judge page runs) would read, and, returned, what judging the step
    would take, in words (:func:`_unjudged_input`)."""
    if judgment is None:
        rendered, estimate = _unjudged_input(session, step, condition, judge)
    else:
        rendered, notes = _judged_input(session, step, judgment, judge)
        estimate = None
        for note in notes:
            st.text(note)
    _input_parts(rendered, [call.name for call in step.message.tool_calls])
    return estimate


def _input_parts(rendered: JudgeInput, called: list[str]) -> None:
    """A step's input, part by part, as text: the menu first."""
    subagent = rendered.parent_call_id is not None
    count = len(rendered.tools)
    st.markdown(
        f"**The menu it chose from: {analysis.counted(count, 'tool')}** "
        f"({rendered.catalog_basis.replace('+', ' + ')} catalog, {rendered.condition} condition)"
    )
    st.text(f"Menu: {rendered.catalog_note}.")
    menu = analysis.views.judged_menu(rendered.tools, called)
    show_table(
        menu,
        height=min(38 + 35 * menu.height, 320),
        column_config={"description": st.column_config.TextColumn(width="large")},
    )
    run = "the subagent's run" if subagent else "this turn"
    ask, context = st.columns(2)
    with ask:
        st.caption("The ask the judge got")
        transcript_text(rendered.ask)
    with context:
        st.caption("Prior context the judge got (earlier turns, summarised)")
        none = "a subagent is judged on its prompt alone" if subagent else "this is the first turn"
        transcript_text(rendered.prior_context or f"(none: {none})")
    st.caption(f"{run.capitalize()} so far, as the judge read it (earlier steps, oldest first)")
    trajectory = rendered.trajectory or f"(none: this is the first step of {run})"
    transcript_text(trajectory)
    st.caption("The output it judged, with the calls")
    output = rendered.output or "(no output)"
    transcript_text(output)
    said = f"cut to fit: {'; '.join(rendered.cuts)}." if rendered.cuts else "nothing was cut."
    if rendered.step_chars is not None:
        said = f"Within a step budget of {rendered.step_chars:,} characters, {said}"
    st.text(said[:1].upper() + said[1:])


def votes_side_by_side(judgment: analysis.Judgment) -> None:
    """Each judge's verdict and reasoning, in columns."""
    columns = st.columns(max(1, len(judgment.votes)))
    for number, (column, vote) in enumerate(zip(columns, judgment.votes, strict=False), start=1):
        column.markdown(f"**Judge {number}: {vote.verdict}**")
        column.text(vote.reasoning)


def _worded_table(frame: pl.DataFrame) -> tuple[pl.DataFrame, dict[str, Any]]:
    """``frame`` and column settings that head its columns in words (``analysis.words``) and
    write its numbers as the report does (``analysis._format``: shares as percentages with one
    decimal, kappas and alphas with three, other fractions — scores — with two, counts with
    separators); shares are scaled to percent for that."""
    from analysis import words

    shown, shares = _shares_in_percent(frame)
    settings: dict[str, Any] = {}
    for column, dtype in frame.schema.items():
        heading = words(column)
        if column in shares:
            settings[column] = st.column_config.NumberColumn(heading, format=PERCENT)
        elif dtype.is_float():
            three = "kappa" in column or "alpha" in column
            settings[column] = st.column_config.NumberColumn(
                heading, format="%.3f" if three else "%.2f"
            )
        elif dtype.is_integer():
            settings[column] = st.column_config.NumberColumn(heading, format="localized")
        else:
            settings[column] = st.column_config.Column(heading)
    return shown, settings


PERCENT = "%.1f%%"
"""How a table column of shares is written once scaled to percent: one decimal."""


def _shares_in_percent(frame: pl.DataFrame) -> tuple[pl.DataFrame, list[str]]:
    """``frame`` with its columns of shares (``analysis.PERCENT_COLUMNS``) scaled to percent,
    for :data:`PERCENT`, and their names."""
    from analysis import PERCENT_COLUMNS

    shares = [column for column in frame.columns if column in PERCENT_COLUMNS]
    return frame.with_columns(pl.col(shares) * 100), shares


def transcript_panel(session: analysis.Session | None) -> None:
    """The session as the Turn page reads it, in an expander: each turn's ask, then its steps
    (each response's text and its calls, as the judge reads a call)."""
    from analysis.render import render_call, turn_steps

    with st.expander("Transcript", expanded=False):
        if session is None:
            st.caption("No transcript of this session was loaded with the labels.")
            return
        for turn in session.turns:
            st.markdown(f"**Turn {turn.index}** · {len(turn.messages)} responses")
            transcript_text(turn.ask or "(no ask)")
            lines = []
            for step in turn_steps(turn, text_steps=True):
                said = " ".join(step.message.text.split())
                calls = "; ".join(render_call(call) for call in step.message.tool_calls)
                lines.append(
                    f"step {step.index}: "
                    + " → ".join(part for part in (said[:300], calls) if part)
                )
            if lines:
                transcript_text("\n".join(lines))


def codes_in_words(column: str) -> pl.Expr:
    """A column of lists of finding codes, each said in words (``analysis.words``)."""
    said = {code: analysis.words(code) for code in analysis.findings.CODES}
    return pl.col(column).list.eval(pl.element().replace(said))


def show_table(
    frame: pl.DataFrame, column_config: dict[str, Any] | None = None, **options: Any
) -> Any:
    """A table as people read it (:func:`_worded_table`: headings in words, numbers as the
    report writes them, a missing value as —); ``column_config`` adds to or replaces a
    column's settings."""
    shown, settings = _worded_table(frame)
    options.setdefault("placeholder", "—")  # a missing value, as the report writes it
    return st.dataframe(
        shown, hide_index=True, column_config=settings | (column_config or {}), **options
    )


def chart_downloads(chart: alt.TopLevelMixin, name: str) -> None:
    """PNG and SVG download buttons for a chart; the files are drawn only when clicked."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "chart"
    formats: list[tuple[str, str, str, Callable[[alt.TopLevelMixin], bytes | str]]] = [
        ("PNG", "png", "image/png", analysis.views.chart_to_png),
        ("SVG", "svg", "image/svg+xml", analysis.views.chart_to_svg),
    ]
    for column, (label, suffix, mime, render) in zip(st.columns([1, 1, 6]), formats, strict=False):
        column.download_button(
            label,
            data=partial(render, chart),
            file_name=f"{stem}.{suffix}",
            mime=mime,
            on_click="ignore",
            icon=":material/download:",
            key=f"download_{stem}_{suffix}",
        )


def max_cost_input(key: str, command: str, estimate: str) -> float | None:
    """The cap on a run's cost, as ``COMMAND --max-cost`` takes it (None: no cap)."""
    value: float | None = st.number_input(
        "Max cost (USD)",
        min_value=0.0,
        value=None,
        step=1.0,
        format="%.2f",
        key=key,
        help=f"Refuse to start when {estimate} is above this, or unknown, as {command} "
        "--max-cost does; empty: no cap.",
    )
    return value


def spender() -> str:
    """Who a run is written down for in the spending log: served, the visitor (their login's
    email, the proxy's header, or "anonymous", whose allowance everyone shares); local,
    "local"."""
    return visitor() or LOCAL


def spending_caps() -> SpendingCaps | None:
    """Served: what the operator lets a run and a person's day spend (``TSQ_MAX_RUN_USD`` and
    ``TSQ_MAX_DAY_USD``, else ``max_run_usd`` and ``max_day_usd`` in the secrets, else $5 and
    $20); a cap that is not an amount is one sentence and the page stops. Local: no cap."""
    if not serving().served:
        return None
    secrets = st.secrets.to_dict() if st.secrets.load_if_toml_exists() else {}
    try:
        return analysis.judge.spending_caps(os.environ, secrets)
    except CapError as error:
        st.error(inert(str(error)))
        st.stop()


def spent_today(who: str, caps: SpendingCaps | None) -> None:
    """Served: "Spent today: $X of $Y" (settled runs at their cost, running ones at their
    estimate); local, nothing (the log is read only by ``tsq audit``)."""
    if caps is None:
        return
    log = AuditLog()
    try:
        spent = log.spent_today(who) if log.path.is_file() else 0.0
    except (OSError, sqlite3.Error) as error:
        st.caption(inert(f"Spent today: unknown ({log.path} cannot be read: {error})."))
        return
    of = f" of {dollars(caps.per_day)}" if caps.per_day is not None else " (no daily cap)"
    st.caption(inert(f"Spent today: {dollars(spent)}{of}"))


@st.cache_resource(ttl=300, max_entries=4, show_spinner=False)
def _scorer_at(folder: str) -> tuple[Any, Any]:
    """A trained scorer's model and card, read once per server for a few minutes (skops: a
    file holding a type outside the trusted list is refused)."""
    from analysis.scorer import FEATURE_SET_VERSION, load_scorer

    return load_scorer(Path(folder), FEATURE_SET_VERSION)


def scorer_explanation_panel(
    session: analysis.Session,
    step: Step,
    judgment: analysis.Judgment,
    record: ScorerRecord | None,
) -> None:
    """Why a trained scorer gave ``step`` its probability: the features that moved it most,
    from the scorer ``tsq score`` recorded in the index (``record``), the step's features read
    again from its session; said in one line where the scorer cannot be read here."""
    from analysis.scorer import ScorerProblem, contributions_chart, explain_step

    if record is None or record.folder is None:
        st.caption(
            "The features that moved this probability show where tsq score recorded the "
            "scorer in the index; these judgments came from a file."
        )
        return
    try:
        scorer, card = _scorer_at(record.folder)
    except (ScorerProblem, OSError):
        st.caption(
            f"The scorer {inert(record.scorer_id)} cannot be read here (its folder moved or "
            "changed): the features that moved this probability are not shown."
        )
        return
    given_by = str(judgment.via or judgment.judge_id)  # a cascade's: its scorer's
    if card.scorer_id != given_by:
        st.caption(
            f"The scorer's folder now holds {inert(card.scorer_id)}, not {inert(given_by)}: "
            "the features that moved this probability are not shown."
        )
        return
    explanation = explain_step(scorer, session, step.turn.index, step.index, step.parent_call_id)
    if explanation is None:
        return
    st.caption(
        f"Probability {explanation.probability:.3f} of a correct choice, calibrated from the "
        f"model's logit {explanation.logit:+.2f}: {explanation.intercept:+.2f} for a step with "
        "no feature, plus the features below (those that moved it most, then all the others "
        "together). Right: toward correct; left: toward incorrect."
    )
    st.altair_chart(contributions_chart(explanation))
