"""What several pages draw: transcript text, calls, what the judge saw, votes, tables and
chart downloads."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

import polars as pl
import streamlit as st

import analysis
from analysis.render import JudgeInput
from workbench._text import inert

if TYPE_CHECKING:
    import altair as alt


def _scroll_height(text: str) -> int | Literal["content"]:
    """Long text scrolls in a box of its own instead of stretching the page."""
    return 360 if text.count("\n") > 18 or len(text) > 2500 else "content"


def transcript_text(text: str) -> None:
    """Transcript text as text: short text inline, long text in a scrolling box."""
    if _scroll_height(text) == "content":
        st.text(text)
    else:
        st.code(text, language=None, wrap_lines=True, height=_scroll_height(text))


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
        st.code(view.text, language=None, wrap_lines=True, height=_scroll_height(view.text))


def judge_input_panel(rendered: JudgeInput, called: list[str]) -> None:
    """What the judge read for one step, part by part, as text: the menu first."""
    subagent = rendered.parent_call_id is not None
    count = len(rendered.tools)
    st.markdown(
        f"**The menu it chose from: {count} tool{'' if count == 1 else 's'}** "
        f"({rendered.catalog_basis.replace('+', ' + ')} catalog, {rendered.condition} condition)"
    )
    st.text(f"Menu: {rendered.catalog_note}.")
    menu = analysis.views.judged_menu(rendered.tools, called)
    st.dataframe(
        menu,
        hide_index=True,
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
    st.code(trajectory, language=None, wrap_lines=True, height=_scroll_height(trajectory))
    st.caption("The output it judged, with the calls")
    output = rendered.output or "(no output)"
    st.code(output, language=None, wrap_lines=True, height=_scroll_height(output))
    st.text(f"Cut to fit: {'; '.join(rendered.cuts)}." if rendered.cuts else "Nothing was cut.")


def votes_side_by_side(judgment: analysis.Judgment) -> None:
    """Each judge's verdict and reasoning, in columns."""
    columns = st.columns(max(1, len(judgment.votes)))
    for number, (column, vote) in enumerate(zip(columns, judgment.votes, strict=False), start=1):
        column.markdown(f"**Judge {number}: {vote.verdict}**")
        column.text(vote.reasoning)


def worded_table(frame: pl.DataFrame) -> tuple[pl.DataFrame, dict[str, Any]]:
    """``frame`` and column settings that head its columns in words and write its numbers as
    the report does (``analysis._format``: shares as percentages with one decimal, fractions
    with two, counts with separators); shares are scaled to percent for that."""
    from analysis import header

    shown, shares = _shares_in_percent(frame)
    settings: dict[str, Any] = {}
    for column, dtype in frame.schema.items():
        if column in shares:
            settings[column] = st.column_config.NumberColumn(header(column), format=PERCENT)
        elif dtype.is_float():
            settings[column] = st.column_config.NumberColumn(header(column), format="%.2f")
        elif dtype.is_integer():
            settings[column] = st.column_config.NumberColumn(header(column), format="localized")
        else:
            settings[column] = header(column)
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


def show_table(frame: pl.DataFrame, **options: Any) -> Any:
    """A table with shares written as percentages with one decimal, as in the charts and the
    report (``analysis._format``), and kappas with three decimals; its columns keep their
    names."""
    shown, shares = _shares_in_percent(frame)
    config = {name: st.column_config.NumberColumn(format=PERCENT) for name in shares} | {
        name: st.column_config.NumberColumn(format="%.3f")
        for name in frame.columns
        if "kappa" in name or "alpha" in name
    }
    return st.dataframe(shown, hide_index=True, column_config=config, **options)


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
