"""One self-contained HTML report: what we found (the few numbers that matter, in words), then
session TSQ, split votes, worst steps, the findings that matter, charts.

The file makes no request when opened: Vega, Vega-Lite and vega-embed are inlined (from
vl-convert), each chart's specification sits in the page with its data, and a
Content-Security-Policy forbids fetching anything. This module computes what the report says;
the Jinja2 templates of ``templates/`` (autoescape on, see :mod:`analysis.report._templates`)
lay it out, and its stylesheet is inlined. Every piece of text from a transcript is
HTML-escaped; chart specifications are embedded as JSON with ``<``, ``>`` and ``&`` escaped, so
a ``</script>`` in an ask cannot end the script that holds it.

A report is a list of :class:`ReportSection`; :func:`report_sections` builds the standard ones
and :func:`build_report` accepts more (``extra_sections``) to append after them. A section's
``facts`` are sentences it adds to *What we found*, the first section (the study's overview adds
the judge-vs-human agreement before and after reconciliation). Sessions are named readably (title
or first ask, shortened, and the short id) beside their ids.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import altair as alt
import polars as pl
from markupsafe import Markup
from pydantic import BaseModel, ConfigDict, field_validator

from analysis._format import cell, counted, interval, no_interval, share
from analysis._glossary import named, words
from analysis._intervals import TOO_FEW_SESSIONS, session_bootstrap
from analysis._scores import of_judge, rater_in_words, scorers_among, turn_scores
from analysis.export import without_home
from analysis.findings import Finding, collect_findings, findings_for_condition
from analysis.index import Collection
from analysis.models import Condition, Judgment, LoadResult, ParseIssue, ScorerRecord, Session
from analysis.report._data import ReportData
from analysis.report._templates import inlined, render
from analysis.study import (
    StudyTables,
    adjudication_load_chart,
    ai_sides_chart,
    before_after_chart,
    causes_chart,
    raw_agreement_chart,
)
from analysis.views import (
    SCORE_COLUMNS,
    ablation_chart,
    ablation_steps,
    ablation_table,
    ambiguous_steps,
    ambiguous_turns,
    chart_spec,
    findings_chart,
    findings_frame,
    findings_summary,
    lowest_steps,
    overview_of,
    score_distribution_chart,
    turn_scores_chart,
    turn_table,
    vega_javascript,
    worst_steps,
)

MAX_TABLE_ROWS = 500
MAX_NAMED_SESSIONS = 5
"""*What we found* names at most this many sessions in one sentence."""
MAX_SESSION_CHARTS = 10
WORST_STEPS_PER_SESSION = 3
WORST_TOOLS = 3
WORST_TOOL_STEPS = 5
"""*What we found* lists the ``WORST_TOOLS`` tools of lowest TSQ among those with at least
``WORST_TOOL_STEPS`` judged steps (fewer say too little to single a tool out)."""
ABLATION_FACETS = 8
"""Beyond this many sessions the ablation chart shows all sessions together."""


class ReportSection(BaseModel):
    """One section of the report: a title, a sentence or two, then charts, a table, more HTML.

    ``intro`` and every table cell are escaped. ``html`` is inserted as given when it is
    :class:`markupsafe.Markup` (HTML the code built, with anything that came from a transcript
    escaped, e.g. by :func:`table_html`); a plain string is text, escaped like ``intro``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    title: str
    intro: str = ""
    charts: Sequence[alt.TopLevelMixin] = ()
    table: pl.DataFrame | None = None
    max_rows: int = MAX_TABLE_ROWS
    html: str = ""
    facts: Sequence[tuple[str, str]] = ()
    """``(key, sentence)`` pairs this section adds to *What we found* (escaped there)."""

    @field_validator("html", mode="plain")
    @classmethod
    def _markup_kept(cls, value: object) -> str:
        """A string as given: :class:`~markupsafe.Markup` stays markup (a ``str`` field would
        make it plain text, to be escaped)."""
        if not isinstance(value, str):
            raise ValueError("html is a string: markupsafe.Markup to insert as HTML, else text")
        return value


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "section"


LONG_CELL = 160
"""Cells longer than this many characters show their start, the rest a click away."""


WORD_CELL = 24
"""Text cells up to this long (a tool's name, a code) never break inside a word."""


class _Cell(NamedTuple):
    """A table cell as the table template writes it: its column, its text (escaped there),
    its class and, for a folded cell, the start it shows and the text's length."""

    column: str
    text: str
    kind: str = ""
    start: str | None = None
    length: str = ""


def _cell(column: str, value: Any) -> _Cell:
    """A table cell: numbers (``num``, right-aligned) by :func:`analysis._format.cell`, nulls
    as —, longer text (``text``) free to wrap anywhere, long text folded."""
    if value is None:
        return _Cell(column, "—")
    if isinstance(value, bool | int | float):
        return _Cell(column, cell(column, value), "" if isinstance(value, bool) else "num")
    text = ", ".join(str(item) for item in value) if isinstance(value, list) else str(value)
    kind = "text" if len(text) > WORD_CELL else ""
    if len(text) <= LONG_CELL:
        return _Cell(column, text, kind)
    start = text[:LONG_CELL].rsplit(" ", 1)[0] if " " in text[:LONG_CELL] else text[:LONG_CELL]
    return _Cell(column, text, kind, start, f"{len(text):,}")


def table_html(frame: pl.DataFrame, name: str, max_rows: int = MAX_TABLE_ROWS) -> Markup:
    """A frame as an HTML table (``table.html``), every cell escaped, headed in words
    (:func:`analysis.words`; ``data-col`` keeps each column's name)."""
    rows = [
        [_cell(column, value) for column, value in zip(frame.columns, row, strict=True)]
        for row in frame.head(max_rows).iter_rows()
    ]
    left_out = frame.height - max_rows
    return render(
        "table.html",
        name=name,
        columns=[(column, words(column)) for column in frame.columns],
        rows=rows,
        left_out=f"{left_out:,}" if left_out > 0 else "",
        total=f"{frame.height:,}",
    )


def _script_json(value: Any) -> Markup:
    """JSON that is safe inside a ``<script>`` element: ``<``, ``>`` and ``&`` escaped as JSON
    escapes, so no text in it can end the element (HTML escaping would corrupt the JSON)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return Markup(text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


class _SectionView(NamedTuple):
    """What ``section.html`` lays out: a section with its anchor, its number (for its charts'
    ids), its charts' specifications and its table as HTML."""

    number: int
    slug: str
    title: str
    intro: str
    specs: list[Markup]
    table: Markup | None
    html: str


def _section_view(section: ReportSection, number: int) -> _SectionView:
    slug = _slug(section.title)
    return _SectionView(
        number=number,
        slug=slug,
        title=section.title,
        intro=section.intro,
        specs=[_script_json(chart_spec(chart)) for chart in section.charts],
        table=None if section.table is None else table_html(section.table, slug, section.max_rows),
        html=section.html,
    )


def render_report(
    sections: Sequence[ReportSection], title: str = "TSQ report", subtitle: str = ""
) -> str:
    """The sections as one HTML document (``report.html``), with the stylesheet and the chart
    libraries inlined."""
    has_charts = any(section.charts for section in sections)
    return str(
        render(
            "report.html",
            title=title,
            subtitle=subtitle,
            sections=[_section_view(section, n) for n, section in enumerate(sections)],
            stylesheet=inlined("report.css"),
            chart_libraries=Markup(vega_javascript()) if has_charts else None,
            chart_script=inlined("charts.js"),
        )
    )


def _named(frame: pl.DataFrame, names: dict[str, str]) -> pl.DataFrame:
    """``frame`` with a readable ``session`` column where its ``session_id`` was, the full id
    moved to the end (to copy, not to read)."""
    if "session_id" not in frame.columns or "session" in frame.columns:
        return frame
    at = frame.columns.index("session_id")
    name = pl.col("session_id").replace_strict(names, default=pl.col("session_id"))
    others = [column for column in frame.columns if column != "session_id"]
    return frame.with_columns(name.cast(pl.String).alias("session")).select(
        *others[:at], "session", *others[at:], "session_id"
    )


def _listed(counts: Sequence[tuple[str, int]], names: dict[str, str]) -> str:
    """``1 in “…” (5eed0000), 2 in …``: the sessions with the most first."""
    ordered = sorted(counts, key=lambda item: (-item[1], names.get(item[0], item[0])))
    shown = [f"{n} in {names.get(sid, sid)}" for sid, n in ordered[:MAX_NAMED_SESSIONS]]
    more = len(ordered) - len(shown)
    return ", ".join(shown) + (f" and {counted(more, 'more session')}" if more else "")


_STEPS = ("judged step or turn", "judged steps or turns")
_UNSEEN: tuple[tuple[frozenset[str], tuple[str, str], str], ...] = (
    (
        frozenset({"CALLED_TOOL_NOT_IN_CATALOG", "USED_TOOLS_MISSING_FROM_CATALOG"}),
        ("session", "sessions"),
        "the menu the judge got lacked a tool the agent called in {}",
    ),
    (frozenset({"SINGLE_TOOL_CATALOG"}), ("session", "sessions"), "the menu held one tool in {}"),
    (
        frozenset({"MISSING_DESCRIPTIONS"}),
        ("session", "sessions"),
        "tools had no description in {}",
    ),
    (
        frozenset({"CALL_NOT_RENDERED"}),
        _STEPS,
        "{} left the agent's call out of what the judge read",
    ),
    (frozenset({"UNSCORED"}), _STEPS, "{} went unscored (no valid vote)"),
    (
        frozenset({"CONTEXT_DEPENDENT_ASK"}),
        ("turn", "turns"),
        "{} had an ask that depends on earlier turns the judge may not have seen",
    ),
)
"""What the judge could not see, from the lint findings: the codes, what is counted (sessions
with one; else one finding per step, turn or judgment) and the sentence."""


def _doubts(findings: Sequence[Finding]) -> list[str]:
    """The warnings about the judgments themselves, each in words with its count."""
    uniform = {f.session_id for f in findings if f.code == "UNIFORM_SESSION_SCORES"}
    same_family = {f.session_id for f in findings if f.code == "SELF_PREFERENCE"}
    doubts = []
    if uniform:
        doubts.append(
            f"{counted(len(uniform), 'session')} scored every judged turn alike "
            "(a judge that cannot tell turns apart is usually missing the catalog or the call)"
        )
    if same_family:
        doubts.append(
            f"{counted(len(same_family), 'session')} "
            f"{'was' if len(same_family) == 1 else 'were'} judged by a model of the agent's own "
            "family (LLM judges favour their own family's output; check against people's labels "
            "or a judge of another family)"
        )
    return doubts


def _unseen_facts(findings: Sequence[Finding]) -> list[tuple[str, str]]:
    parts = []
    for codes, (one, many), sentence in _UNSEEN:
        hits = [f for f in findings if f.code in codes]
        if hits:
            count = len({f.session_id for f in hits}) if one == "session" else len(hits)
            parts.append(sentence.format(counted(count, one, many)))
    doubts = _doubts(findings)
    facts = []
    if parts:
        facts.append(("unseen", "What the judge could not see: " + "; ".join(parts) + "."))
    elif not doubts:
        facts.append(
            (
                "unseen",
                "Nothing was hidden from the judge: every called tool was on its menu, no call "
                "was left out of what it read and every judged step was scored.",
            )
        )
    if doubts:
        facts.append(("doubt", "Scores that may mislead: " + "; ".join(doubts) + "."))
    no_catalog = {f.session_id for f in findings if f.code == "NO_CATALOG"}
    if no_catalog:
        facts.append(
            (
                "no_catalog",
                f"Separately, about the input rather than what the judge saw: "
                f"{counted(len(no_catalog), 'session')} "
                f"{'carries' if len(no_catalog) == 1 else 'carry'} no tool catalog on the trace, "
                "so a platform receiving the trace sees no menu; tsq export attaches the menu.",
            )
        )
    return facts


def _found_section(
    names: dict[str, str],
    judgments: Sequence[Judgment],
    findings: Sequence[Finding],
    overview: pl.DataFrame,
    condition: Condition,
    steps_scored: pl.DataFrame | None,
    extra_facts: Sequence[tuple[str, str]] = (),
    scorers: Mapping[str, ScorerRecord | None] | None = None,
) -> ReportSection:
    """The page a stakeholder reads: the headline figures with their intervals and the worst
    tools, then the few numbers that matter, each in one sentence, from the tables the other
    sections show (:func:`turn_scores` for turns and steps, :func:`session_overview` for
    sessions, the trends' rule for tools and agreement). ``scorers``: the trained step scorers
    among the judges, each always called one."""
    scorers = scorers or {}
    voted = any(j.rater == "judge" and j.condition == condition for j in judgments)
    scores = turn_scores(judgments).filter(pl.col("condition") == condition)
    means = overview["mean_tsq"].drop_nulls()
    steps = int(scores["steps"].sum())
    unit, units = ("decision (step)", "decisions (steps)") if steps else ("turn", "turns")
    judged = steps or scores.height
    facts: list[tuple[str, str]] = []
    if means.len():
        facts.append(
            (
                "mean_tsq",
                f"Mean TSQ is {_mean_tsq(overview)} across "
                f"{counted(means.len(), 'judged session')} (of {overview.height}; "
                f"{condition} condition; a session's TSQ is the mean of its turns, a turn's the "
                "mean of its judged steps), from 0 (every choice wrong) to 1 (every choice "
                "right).",
            )
        )
    if scores.height:
        who = "The judges" if voted else "A trained step scorer"
        facts.append(
            (
                "judged",
                f"{who} scored {counted(steps, 'decision (step)', 'decisions (steps)')} in "
                f"{counted(scores.height, 'turn')}."
                if steps
                else f"{who} scored {counted(scores.height, 'turn')}, each as a whole.",
            )
        )
        if scorers:
            named = "; ".join(rater_in_words(name, scorers) for name in scorers)
            where = "" if not voted else " where no LLM judge judged a session"
            facts.append(
                (
                    "scorer",
                    f"Scores{where} are by {named}: its probability that each choice was "
                    "correct, not votes.",
                )
            )
    if scores.height and voted:
        split = (
            scores.group_by("session_id")
            .agg(pl.col("split_steps").sum())
            .filter(pl.col("split_steps") > 0)
        )
        total = int(split["split_steps"].sum())
        facts.append(
            (
                "ambiguous",
                f"{total} of {counted(judged, unit, units)} "
                f"{'was' if total == 1 else 'were'} ambiguous (the judges split): "
                f"{_listed(list(split.iter_rows()), names)}."
                if total
                else f"No {unit} was ambiguous: the judges agreed on every one.",
            )
        )
    if not scores.height:
        facts.append(("judged", f"Nothing was judged under the {condition} condition yet."))
    facts.extend(_unseen_facts(findings))
    facts.extend(extra_facts)
    figures, worst_tools = _glance(overview, means, judged, unit, steps_scored)
    html = render(
        "found.html",
        figures=figures,
        worst_tools=worst_tools,
        worst_tool_steps=WORST_TOOL_STEPS,
        facts=facts,
    )
    return ReportSection(title="What we found", html=html)


def _mean_tsq(overview: pl.DataFrame) -> str:
    """The mean of the judged sessions' TSQ with its 95% interval, resampling the sessions
    (:func:`analysis._intervals.session_bootstrap`), or why it has none."""
    judged = overview.filter(pl.col("mean_tsq").is_not_null()).sort("session_id")
    values = judged["mean_tsq"].to_numpy().astype(float)
    sessions = judged["session_id"].to_numpy()
    bounds = session_bootstrap(values, sessions)
    if bounds is None:
        return f"{values.mean():.2f}{no_interval(len(set(sessions)))}"
    return f"{values.mean():.2f} [{bounds.low:.2f}, {bounds.high:.2f}]"


def _glance(
    overview: pl.DataFrame,
    means: pl.Series,
    judged: int,
    unit: str,
    steps: pl.DataFrame | None,
) -> tuple[list[tuple[str, str, str]], Markup | None]:
    """The figures a stakeholder reads first, each with its interval (``(key, label, value)``:
    sessions, what was judged, mean TSQ, agreement with people where they labelled steps),
    and the table of the worst tools, if any tool has enough judged steps."""
    from analysis.index import agreement, trends

    figures = [
        ("sessions", "Sessions", f"{overview.height:,}"),
        ("judged", "Steps judged" if unit.endswith("(step)") else "Turns judged", f"{judged:,}"),
        ("mean_tsq", "Mean TSQ [95% interval]", _mean_tsq(overview) if means.len() else "—"),
    ]
    worst = None
    if steps is not None:
        people = agreement(steps)
        if people["labelled"]:
            low, high = people["agreement_low"], people["agreement_high"]
            bounds = None if low is None or high is None else (float(low), float(high))
            sessions = int(people["labelled_sessions"] or 0)
            figures.append(
                (
                    "agreement",
                    "Judge agrees with people",
                    f"{share(people['agreement'])}"
                    f"{interval(bounds, percent=True, sessions=sessions)}"
                    f" of {people['labelled']:,} labelled steps",
                )
            )
        tools = (
            trends(steps, "tool")
            .filter(pl.col("judged") >= WORST_TOOL_STEPS)
            .sort("tsq", "tool")
            .head(WORST_TOOLS)
        )
        if tools.height:
            rows = tools.select(
                "tool",
                pl.col("judged").alias("steps_scored"),
                "judged_sessions",
                "tsq",
                "tsq_low",
                "tsq_high",
            )
            if rows["tsq_low"].is_null().any():
                rows = rows.with_columns(
                    pl.when(pl.col("tsq_low").is_null())
                    .then(pl.lit(TOO_FEW_SESSIONS))
                    .otherwise(pl.lit(""))
                    .alias("interval")
                )
            worst = table_html(rows, "worst-tools")
    return figures, worst


def _summary_section(
    data: ReportData, judgments: Sequence[Judgment], condition: Condition
) -> ReportSection:
    judged = [j for j in judgments if j.condition == condition]
    steps = sum(j.unit == "step" for j in judged)
    scorers = scorers_among(judged, data.scorers)
    models = sorted({j.model for j in judged if j.rater == "judge"})
    rows = [
        ("sessions", data.base.height),
        ("turns", int(data.base["turns"].sum())),
        ("tool calls", int(data.base["tool_calls"].sum())),
        ("files read", data.files_read),
        ("parse issues", len(data.issues)),
        (f"judged turns ({condition})", len({(j.session_id, j.turn_index) for j in judged})),
        *([(f"judged steps ({condition})", steps)] if steps else []),
        ("judge models", ", ".join(models) or None),
        *[("trained step scorer", rater_in_words(name, scorers)) for name in scorers],
    ]
    frame = pl.DataFrame(
        {
            "": [name for name, _ in rows],
            "value": [str(v) if v is not None else None for _, v in rows],
        }
    )
    return ReportSection(
        title="Summary",
        intro=f"Scores are the judges' under the {condition!r} condition."
        + (
            " A trained step scorer's score is its probability that the choice was correct, "
            "not a vote."
            if scorers
            else ""
        ),
        table=frame,
    )


def _sessions_section(
    overview: pl.DataFrame, condition: Condition, names: dict[str, str]
) -> ReportSection:
    shown = _named(overview, names).select(
        "session",
        *SCORE_COLUMNS,
        "turns",
        "tool_calls",
        "format",
        "session_id",
    )
    charts = [score_distribution_chart(overview)] if overview["mean_tsq"].drop_nulls().len() else []
    return ReportSection(
        title="Sessions",
        intro=(
            "One row per session, named by its title (or first ask) and short id. A step's TSQ "
            "is the fraction of valid votes that called its "
            f"tool choice correct ({condition!r} condition); a turn's is the mean of its judged "
            "steps (or its own score, when whole turns were judged); mean TSQ averages the "
            "session's judged turns. Split turns are those where the judges disagreed on the "
            "turn or on one of its steps."
        ),
        charts=charts,
        table=shown,
    )


def _ablation_section(judgments: Sequence[Judgment], names: dict[str, str]) -> ReportSection | None:
    if len({j.condition for j in judgments}) < 2:
        return None
    by_session = len({j.session_id for j in judgments}) <= ABLATION_FACETS
    table = _named(ablation_table(judgments, by_session=by_session), names)
    return ReportSection(
        title="What the judge saw (ablation)",
        intro=(
            "The same turns judged three ways: bare (only the called tool on the menu: every "
            "choice looks right), catalog_no_call (the whole menu, but the call left out of the "
            "output: every turn looks like a failure to act) and full (menu and call)."
        ),
        charts=[ablation_chart(table)],
        table=table,
    )


SessionReader = Callable[[Iterable[str]], list[Session]]
"""Sessions by id, read from their files once each, in load order."""


def _session_reader(data: ReportData) -> SessionReader:
    """Each section reads the sessions it shows, no more: a collection of 10,000 judged
    sessions is not read whole for a table of the few hundred rows it shows."""
    kept: dict[str, Session] = {}
    order = {session: n for n, session in enumerate(data.base["session_id"])}

    def read(ids: Iterable[str]) -> list[Session]:
        wanted = set(ids)
        missing = wanted - kept.keys()
        if missing:
            kept.update((s.session_id, s) for s in data.sessions(missing))
        found = [kept[i] for i in wanted if i in kept]
        return sorted(found, key=lambda s: order.get(s.session_id, len(order)))

    return read


def _ablation_steps_section(
    read: SessionReader, judgments: Sequence[Judgment], names: dict[str, str]
) -> ReportSection | None:
    steps = [j for j in judgments if j.unit == "step"]
    if len({j.condition for j in steps}) < 2:
        return None
    sessions = read({j.session_id for j in steps})
    return ReportSection(
        title="What the judge saw, step by step",
        intro=(
            "Each judged step's score under every condition loaded, side by side: the ablation "
            "one decision at a time."
        ),
        table=_named(ablation_steps(sessions, steps), names),
    )


def _split_session_charts(
    judged_sessions: Sequence[Session],
    judgments: Sequence[Judgment],
    findings: Sequence[Finding],
    condition: Condition,
    split: pl.DataFrame,
    names: dict[str, str],
) -> list[alt.TopLevelMixin]:
    """TSQ per turn of the sessions with a split vote (the first few)."""
    with_split = set(split["session_id"])
    sessions = [s for s in judged_sessions if s.session_id in with_split]
    return [
        turn_scores_chart(turn_table(session, judgments, findings, condition)).properties(
            title=f"TSQ per turn — {names.get(session.session_id, session.session_id)}"
        )
        for session in sessions[:MAX_SESSION_CHARTS]
    ]


def _ambiguous_sections(
    sessions: Sequence[Session],
    judgments: Sequence[Judgment],
    findings: Sequence[Finding],
    condition: Condition,
    names: dict[str, str],
) -> list[ReportSection]:
    """Split votes: per step for step judgments, per turn for turn-level ones (or none yet)."""
    judged = [j for j in judgments if j.condition == condition]
    units = {j.unit for j in judged}
    sections = []
    if "step" in units:
        split = ambiguous_steps(sessions, judged, condition)
        intro = (
            "Steps where the judges split (0 < TSQ < 1): the most useful ones for a human to "
            "review, each with its turn's ask, its calls and one judge's argument from each "
            "side. The charts show these sessions turn by turn (a turn's TSQ is the mean of its "
            "steps)."
            if split.height
            else "No step has a split vote."
        )
        sections.append(
            ReportSection(
                title="Ambiguous steps (split votes)",
                intro=intro,
                charts=_split_session_charts(
                    sessions, judgments, findings, condition, split, names
                ),
                table=_named(split, names) if split.height else None,
            )
        )
    if "turn" in units or not units:
        split = ambiguous_turns(sessions, [j for j in judged if j.unit == "turn"], condition)
        intro = (
            "Turns where the judges split (0 < TSQ < 1): the most useful ones for a human to "
            "review, with one judge's argument from each side."
            if split.height
            else "No turn has a split vote."
        )
        sections.append(
            ReportSection(
                title="Ambiguous turns (split votes)",
                intro=intro,
                charts=_split_session_charts(
                    sessions, judgments, findings, condition, split, names
                ),
                table=_named(split, names) if split.height else None,
            )
        )
    return sections


def _worst_steps_section(
    read: SessionReader,
    judgments: Sequence[Judgment],
    condition: Condition,
    names: dict[str, str],
) -> ReportSection | None:
    steps = [j for j in judgments if j.condition == condition and j.unit == "step"]
    if not steps:
        return None
    lowest = lowest_steps(steps, condition, WORST_STEPS_PER_SESSION)
    shown = set(lowest.head(MAX_TABLE_ROWS)["session_id"])  # the rows the table shows
    worst = worst_steps(
        read(shown),
        [j for j in steps if j.session_id in shown],
        condition,
        WORST_STEPS_PER_SESSION,
    )
    more = (
        f" {lowest.height:,} such steps in all; the table lists those of the first "
        f"{len(shown):,} sessions."
        if lowest.height > worst.height
        else ""
    )
    return ReportSection(
        title="Worst steps per session",
        intro=(
            f"The {WORST_STEPS_PER_SESSION} lowest-scoring steps of each session (those below "
            "1), lowest first, with the calls the judges read and one argument against the "
            "choice." + more
            if worst.height
            else "Every judged step scored 1 (or was unscored)."
        ),
        table=_named(worst, names) if worst.height else None,
    )


def _version_order(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version))


def _trends_sections(steps: pl.DataFrame | None) -> list[ReportSection]:
    """TSQ over time and per agent version and tool (the collection's trends, from these
    sessions and judgments), and the last two agent versions compared: differences only with
    their intervals, and a change inside the noise said to be one."""
    from analysis.index import readable_trends, shift, trend_chart, trends

    if steps is None:
        return []
    weekly, versions, tools = (trends(steps, by) for by in ("week", "version", "tool"))
    facts = []
    for _, of_agent in steps.group_by("agent", maintain_order=True):
        judged_versions = sorted(
            trends(of_agent, "version").filter(pl.col("judged") >= 2)["version"].drop_nulls(),
            key=_version_order,
        )
        if len(judged_versions) >= 2:
            moved = shift(of_agent, "version", judged_versions[-2], judged_versions[-1])
            facts.append(("version_shift", "Between agent versions: " + moved.in_words()))
    judge = steps["judge"][0]
    return [
        *_agents_section(steps),
        ReportSection(
            title="Trends",
            intro=(
                f"Mean TSQ of the judged steps (judge {judge}, full condition) by week and by "
                "agent version, each with its 95% interval (a bootstrap that resamples "
                "sessions, as a session's steps are not independent; Wilson over the sessions "
                "where every step scored alike; none over fewer than five sessions). A "
                "difference counts only where the interval of the difference leaves out 0."
            ),
            charts=[trend_chart(weekly, "week"), trend_chart(versions, "version")],
            table=readable_trends(versions),
            facts=facts,
        ),
        ReportSection(
            title="TSQ by tool",
            intro="A step that called several tools counts for each of them.",
            table=readable_trends(tools),
        ),
    ]


def _agents_section(steps: pl.DataFrame) -> list[ReportSection]:
    """Where the sessions come from both coding agents: each one's TSQ, calls per turn, tool
    errors and split-vote share, and the two compared (the one with more judged steps first).
    Other formats (OpenAI-format trajectories, foreign traces) are no coding agent's."""
    from analysis.index import readable_trends, shift, trends

    agents = trends(steps, "agent").filter(
        (pl.col("judged") > 0) & pl.col("agent").is_in(["claude-code", "codex"])
    )
    if agents.height < 2:
        return []
    first, second = agents.sort("judged", descending=True)["agent"][:2]
    moved = shift(steps, "agent", first, second)
    return [
        ReportSection(
            title="Agents compared",
            intro=(
                "The same judge on each agent's steps: mean TSQ with its 95% interval, tool "
                "calls per turn, tool errors and the split-vote share. A difference counts only "
                "where the interval of the difference leaves out 0."
            ),
            table=readable_trends(agents).with_columns(
                pl.when(pl.col("calls") > 0)
                .then(pl.col("errors") / pl.col("calls"))
                .alias("error_rate")
            ),
            facts=[("agent_shift", "Between agents: " + moved.in_words())],
        )
    ]


def _findings_section(findings: Sequence[Finding], names: dict[str, str]) -> ReportSection:
    serious = [f for f in findings if f.severity in ("error", "warning")]
    if not serious:
        return ReportSection(title="Findings that matter", intro="No error or warning finding.")
    summary = _codes_in_words(findings_summary(serious))
    details = _codes_in_words(
        findings_frame(serious).select(
            "session_id",
            "turn_index",
            "step_index",
            "parent_call_id",
            "severity",
            "code",
            "message",
        )
    )
    return ReportSection(
        title="Findings that matter",
        intro=(
            "Diagnostics of error and warning severity (tsq lint): reasons a score may not mean "
            "what it seems to. By code first, then every finding; one without a turn is about "
            "the whole session (every turn of it, for a catalog finding)."
        ),
        charts=[findings_chart(summary)],
        table=summary,
        html=table_html(_named(details, names), "findings-list"),
    )


def _codes_in_words(frame: pl.DataFrame) -> pl.DataFrame:
    """Its ``code`` column as a person reads it: ``one-tool menu (SINGLE_TOOL_CATALOG)``."""
    said = {code: named(code) for code in frame["code"].unique()}
    return frame.with_columns(pl.col("code").replace_strict(said, return_dtype=pl.String))


def _issues_section(issues: Sequence[ParseIssue], show_paths: bool) -> ReportSection | None:
    if not issues:
        return None
    frame = pl.DataFrame(
        [issue.model_dump() for issue in issues],
        schema={"file": pl.String, "line": pl.Int64, "reason": pl.String},
    )
    if not show_paths:  # home folder names are personal data, as in tsq send
        frame = frame.with_columns(
            pl.col("file", "reason").map_elements(without_home, return_dtype=pl.String)
        )
    return ReportSection(
        title="Parse issues",
        intro="What could not be used in the input files; every valid line around them was kept."
        + ("" if show_paths else " Home folders are written ~ (yours) and /home/USER (others')."),
        table=frame,
    )


def report_sections(
    source: LoadResult | Collection | ReportData,
    judgments: Sequence[Judgment],
    findings: Sequence[Finding],
    condition: Condition = "full",
    extra_facts: Sequence[tuple[str, str]] = (),
    show_paths: bool = False,
) -> list[ReportSection]:
    """The standard sections: what we found (with ``extra_facts`` at its end), summary,
    sessions, trends (over time, per agent version and tool), ablation (per session, then per
    step), split votes, worst steps, findings, issues. The issues' file names keep home folder
    names only with ``show_paths``. Of a collection, only the judged sessions are read from
    their files; the rest comes from the index."""
    data = ReportData.of(source)
    relevant = findings_for_condition(findings, condition)
    overview = overview_of(data.base, data.labels, judgments, findings_frame(relevant), condition)
    names = data.names
    read = _session_reader(data)
    split = {j.session_id for j in judgments if j.verdict == "split"}
    steps = data.steps(judgments) if condition == "full" else None
    judged_steps = steps if steps is not None and steps["judged"].any() else None
    trend_sections = _trends_sections(judged_steps)
    facts = [fact for section in trend_sections for fact in section.facts]
    sections: list[ReportSection | None] = [
        _found_section(
            names,
            judgments,
            relevant,
            overview,
            condition,
            judged_steps,
            [*facts, *extra_facts],
            scorers_among(judgments, data.scorers),
        ),
        _summary_section(data, judgments, condition),
        _sessions_section(overview, condition, names),
        *trend_sections,
        _ablation_section(judgments, names),
        _ablation_steps_section(read, judgments, names),
        *_ambiguous_sections(read(split), judgments, relevant, condition, names),
        _worst_steps_section(read, judgments, condition, names),
        _findings_section(relevant, names),
        _issues_section(data.issues, show_paths),
    ]
    return [section for section in sections if section is not None]


def report_findings(
    source: LoadResult | Collection, judgments: Sequence[Judgment]
) -> list[Finding]:
    """``analysis.collect_findings`` of the sessions with ``judgments``: of a collection, only
    the judged sessions are read again from their files."""
    if isinstance(source, Collection):
        return source.findings(frame=source.findings_with(judgments))
    return collect_findings(source.sessions, judgments)


def build_report(
    source: LoadResult | Collection,
    judgments: Sequence[Judgment] | None = None,
    findings: Sequence[Finding] | None = None,
    *,
    condition: Condition = "full",
    extra_sections: Sequence[ReportSection] = (),
    title: str = "TSQ report",
    show_paths: bool = False,
) -> str:
    """The whole report as one HTML document (a string); see :func:`report_sections`.

    ``source`` is a load (``analysis.load``) or a collection read through the index
    (``analysis.index.Collection``). ``judgments`` default to those found with the
    transcripts, ``findings`` to ``analysis.collect_findings`` of the sessions with the judgments;
    ``extra_sections`` are appended at the end, and their ``facts`` join *What we found*. A
    session judged by several judges is reported with its own judge's judgments
    (:func:`analysis.judge.of_judge`; pass one judge's to choose). File names are written
    with ``~`` for the home folder and ``USER`` for another user's, unless ``show_paths``.
    """
    judged = of_judge(list(source.judgments if judgments is None else judgments))
    found = report_findings(source, judged) if findings is None else list(findings)
    facts = [fact for section in extra_sections for fact in section.facts]
    standard = report_sections(source, judged, found, condition, facts, show_paths)
    sections = [*standard, *extra_sections]
    subtitle = "Tool Selection Quality: did the agent pick the right tool at each step?"
    return render_report(sections, title, subtitle)


def _agreement_facts(before_after: pl.DataFrame) -> list[tuple[str, str]]:
    """Judge (council) vs human agreement per field, before and after reconciliation."""
    if before_after.is_empty():
        return []
    fields = ", ".join(
        f"{field} {share(before)} → {share(after)}"
        for field, before, after in before_after.select("field", "before", "after").iter_rows()
    )
    items = max(before_after["n"].to_list())
    return [
        (
            "agreement",
            f"Judge vs human: on {counted(items, 'item')}, the judge council's label matched "
            f"the human label before → after reconciliation: {fields}.",
        )
    ]


def study_sections(tables: StudyTables) -> list[ReportSection]:
    """The council-vs-human study: how sessions were settled, then its five tables."""
    counts = tables.sessions
    overview = ReportSection(
        facts=_agreement_facts(tables.before_after),
        title="Council vs human",
        intro=(
            f"{counted(counts.sessions, 'session')} labelled by the council and by humans; "
            f"{counts.with_disagreement} disagree on at least one field: "
            f"{counts.human_adjudicated} human-adjudicated, {counts.ai_adjudicated} "
            f"AI-adjudicated, {counts.open} still open."
        ),
    )
    parts: list[tuple[str, str, Callable[[pl.DataFrame], alt.TopLevelMixin], pl.DataFrame]] = [
        (
            "Raw agreement per field",
            "Before any reconciliation: how often the council's label exactly matched the "
            "human's, with Cohen's kappa (linearly weighted for ordinal fields) and bootstrap "
            "95% intervals.",
            raw_agreement_chart,
            tables.raw_agreement,
        ),
        (
            "Disagreement causes",
            "Causes per field across adjudicated disagreements, by who adjudicated them.",
            causes_chart,
            tables.causes,
        ),
        (
            "Adjudication load",
            "Disagreements per field and who settled them.",
            adjudication_load_chart,
            tables.adjudication_load,
        ),
        (
            "The AI adjudicator's side",
            "On every disagreement the AI adjudicated: the side it chose, and whether that "
            "was the side the field's rule proposed.",
            ai_sides_chart,
            tables.ai_sides,
        ),
        (
            "Before and after reconciliation",
            "How often the label matches the human reference: the raw council label (before) "
            "and the calibrated label (after).",
            before_after_chart,
            tables.before_after,
        ),
    ]
    sections = [overview]
    for title, intro, chart, table in parts:
        charts: list[alt.TopLevelMixin] = [chart(table)] if not table.is_empty() else []
        sections.append(ReportSection(title=title, intro=intro, charts=charts, table=table))
    return sections
