"""What a judge run gave, in a few lines: per condition its units, turns, mean turn TSQ, split and
unscored verdicts, then what it cost. ``tsq judge`` prints them; the Judge page shows them."""

from __future__ import annotations

from collections.abc import Sequence

from analysis._scores import turn_scores
from analysis.llm import RunStats, dollars
from analysis.models import Judgment
from analysis.render import CONDITIONS


def run_summary(judgments: Sequence[Judgment], stats: RunStats) -> list[str]:
    """One line per condition judged, and one of votes, requests and tokens."""
    lines = []
    for condition in CONDITIONS:
        rows = [j for j in judgments if j.condition == condition]
        if not rows:
            continue
        scores = turn_scores(rows)
        turn_tsq = scores["score"].drop_nulls().to_list()
        mean = f"{sum(turn_tsq) / len(turn_tsq):.2f}" if turn_tsq else "n/a"
        split = sum(j.verdict == "split" for j in rows)
        unscored = sum(j.verdict == "unscored" for j in rows)
        unit = "steps" if rows[0].unit == "step" else "turns"
        lines.append(
            f"{condition}: {len(rows)} {unit} in {len(scores)} turns, mean turn TSQ {mean}, "
            f"{split} split votes, {unscored} unscored"
        )
    cost = dollars(stats.cost_usd) if stats.cost_usd is not None else "unknown cost"
    lines.append(
        f"{stats.votes_asked} votes asked, {stats.cache_hits} from the vote cache, "
        f"{stats.http_requests} HTTP requests; tokens: {stats.input_tokens} input, "
        f"{stats.cache_write_tokens} cache writes, {stats.cache_read_tokens} cache reads, "
        f"{stats.output_tokens} output ({cost})"
    )
    return lines
