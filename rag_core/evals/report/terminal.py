"""The terminal summary of a session's golden cases and live runs, made from the cases as the run
record keeps them (``runs/schema.CaseEntry``), as the markdown summary and the HTML report are: the
three cannot disagree on what a session did."""

from __future__ import annotations

from decimal import Decimal
from typing import Callable, Sequence

from rag_core.evals.runs.schema import CaseEntry, Cost
from rag_core.evals.runs.tally import tally_cases


def golden_lines(cases: Sequence[CaseEntry], accept: str | None = None) -> list[str]:
    """The counts, then each case whose files a reviewer should look at: stale cassettes, new and
    updated goldens, the files ``--accept`` wrote, and what a session cut short committed; last,
    ``accept``: the one command that accepts the changes of every case that shows one."""
    counted = tally_cases(cases)
    lines = [f"{counted.cases} cases, {counted.failed} failed, {counted.new} new goldens, {counted.updated} goldens "
             f"updated, {counted.recorded} recorded, {counted.stale} stale cassettes, {counted.tokens} tokens in "
             f"recordings{_no_usage(cases)}"]
    lines += [f"  stale cassette: {case.id} ("
              + ("--accept records it again)" if case.accept else "its failure or warning says how to re-record it)")
              for case in cases if case.stale]
    lines += [f"  new golden: {case.id} (review the new .golden.yaml file before committing it)"
              for case in cases if case.wrote == "new"]
    lines += [f"  golden updated: {case.id} (review with git diff)" for case in cases
              if case.wrote == "updated" and not case.accepted]
    lines += [f"  accepted: {case.id}: wrote {', '.join(case.written)} (review with git diff)"
              for case in cases if case.accepted and case.written]
    lines += [f"  recorded while the session was cut short: {case.id} (its test did not report)"
              for case in cases if case.cut_short]
    if accept:
        lines.append(f"if every change shown is intended, accept them all (records the stale cassettes again, writes "
                     f"the goldens, so that CI replays green): {accept}")
    return lines


def _no_usage(cases: Sequence[CaseEntry]) -> str:
    """What the token count leaves out: cases whose model calls reported no usage at all (a
    streamed Chat Completions call reports it only when asked), named so that a count of 0 is
    not read as a broken one."""
    ids = [case.id for case in cases if case.no_usage]
    if not ids:
        return ""
    shown = ", ".join(ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
    if all(case.no_usage == "stream" for case in cases if case.no_usage):
        return (f" (not counted: {shown}, whose stream reported no usage; a stream reports it only when asked, e.g. "
                "Chat Completions' stream_options={'include_usage': True})")
    return f" (not counted: {shown}, whose provider reported no usage)"


def live_table(cases: Sequence[CaseEntry], shown_id: Callable[[str], str] = str) -> list[str]:
    """Per case: passes of runs, pass rate against min_pass_rate, latency p50/p95, median tokens
    (a markdown table, readable in a terminal too; ``shown_id``: how a case id is written in it,
    as a code span in a markdown summary). Cases that failed before running show as such."""
    lines = ["| case | passed | pass rate | min | p50 s | p95 s | tokens/run | gate |",
             "|---|---|---|---|---|---|---|---|"]
    for case in cases:
        name, live = shown_id(case.id), case.live
        if live is None:
            lines.append(f"| {name} | – | – | – | – | – | – | {'error' if case.status == 'failed' else 'skipped'} |")
            continue
        lines.append(f"| {name} | {live.passes}/{live.runs} | {live.pass_rate:.0%} | {live.min_pass_rate:.0%} | "
                     f"{live.p50:.2f} | {live.p95:.2f} | {live.tokens} | {'pass' if live.ok else 'FAIL'} |")
    return lines


def live_lines(cases: Sequence[CaseEntry], priced: bool) -> list[str]:
    """The live runs' table, then their totals: runs, runs made again, tokens, their price
    (``priced``: whether prices could be read at all)."""
    ran = [case.live for case in cases if case.live is not None]
    lines = live_table(cases)
    lines.append(f"{sum(live.runs for live in ran)} runs, {sum(live.retries for live in ran)} run again after a "
                 f"pushback, {sum(live.tokens_total for live in ran)} tokens, "
                 f"{described([live.cost for live in ran], priced)}")
    resumed = sum(live.resumed for live in ran)
    if resumed:
        lines.append(f"{resumed} of them taken from the session that was cut short (--resume)")
    return lines


def described(costs: Sequence[Cost], priced: bool) -> str:
    """The price of runs as a summary states it: dollars, and the models that could not be priced."""
    if not priced:
        return "no prices (genai-prices is not installed)"
    usd = sum(Decimal(str(cost.usd or 0)) for cost in costs)
    unpriced = list(dict.fromkeys(model for cost in costs for model in cost.unpriced))
    return f"${usd:.4f} at list prices" + (f" (not priced: {', '.join(unpriced)})" if unpriced else "")
