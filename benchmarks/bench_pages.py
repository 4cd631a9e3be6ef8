"""How long each page of the app takes on the bundled data: a first run and a rerun.

Each page runs in Streamlit's AppTest in a fresh Python process (so a page pays for its own
imports and empty caches, as after a server start): the entrypoint once, then the page (its
*first* run, caches empty), then the same page again (a *rerun*, as after a click). The
Agreement page is also timed after a click on a row of its pair table. Prints the times and
each rerun's ratio to the first run. Decisions go to a temporary ``TSQ_DATA_DIR``.

    python benchmarks/bench_pages.py [--pages agreement adjudicate ...] [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

APP = Path(__file__).resolve().parents[1] / "app.py"
PAGES = ["overview", "session", "turn", "catalog", "judge", "agreement", "adjudicate"]
CLICKS = {"agreement": "pair_table"}  # a table whose row a click selects


def time_page(page: str) -> dict[str, float]:
    """First run, rerun (and a click where the page has one) of one page, in this process."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=300)
    at.run()
    st.cache_data.clear()
    st.cache_resource.clear()
    times: dict[str, float] = {}
    start = time.perf_counter()
    at.switch_page(f"pages/{page}.py").run()
    times["first"] = time.perf_counter() - start
    start = time.perf_counter()
    at.run()
    times["rerun"] = time.perf_counter() - start
    if page in CLICKS:
        at.session_state[CLICKS[page]] = {"selection": {"rows": [0], "columns": [], "cells": []}}
        start = time.perf_counter()
        at.run()
        times["click"] = time.perf_counter() - start
    if at.exception:
        raise RuntimeError(f"{page}: {at.exception[0].message}")
    return times


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pages", nargs="+", default=PAGES, choices=PAGES)
    parser.add_argument("--one", choices=PAGES, help=argparse.SUPPRESS)  # the child process
    args = parser.parse_args()
    if args.one:
        print(json.dumps(time_page(args.one)))
        return
    print(f"{'page':12} {'first':>8} {'rerun':>8} {'ratio':>6} {'click':>8} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as data:
        env = {**os.environ, "TSQ_DATA_DIR": data}
        for page in args.pages:
            done = subprocess.run(
                [sys.executable, __file__, "--one", page],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            times = json.loads(done.stdout.strip().splitlines()[-1])
            first, rerun = times["first"], times["rerun"]
            line = f"{page:12} {first:7.2f}s {rerun:7.2f}s {rerun / first:6.2f}"
            if "click" in times:
                line += f" {times['click']:7.2f}s {times['click'] / first:6.2f}"
            print(line, flush=True)


if __name__ == "__main__":
    main()
