"""The HTML report: its tables, plots and evidence are in the page, plotly.js is inline, and
nothing links out."""

from __future__ import annotations

import re
from dataclasses import replace

from arena.report.compare import compare_sets
from arena.report.page import render_report
from arena.report.runs import ResultSet


def test_the_page_has_its_tables_plots_and_comparison(two_sets, elements) -> None:  # type: ignore[no-untyped-def]
    sets, library = two_sets
    page = render_report(sets, library, compare_sets(sets[0], sets[1]), created_unix=1.0)
    parsed = elements(page)
    for css in ("summary", "runs", "comparison", "comparison-fast-p", "keys"):
        assert parsed.having("table", **{"class": css}), css
    for plot in ("plot-speedup-triton2triton", "plot-distribution", "plot-cost", "plot-comparison"):
        assert parsed.having("div", id=plot), plot
        assert re.search(rf'Plotly\.newPlot\(\s*"{plot}"', page), plot  # drawn by its own script
    assert "1970-01-01 00:00:01 UTC" in page


def test_plotly_js_is_inline_and_nothing_links_out(two_sets, elements) -> None:  # type: ignore[no-untyped-def]
    sets, library = two_sets
    page = render_report(sets, library, None, created_unix=1.0)
    scripts = re.findall(r"<script[^>]*>(.*?)</script>", page, flags=re.S)
    assert any("plotly.js v" in script[:200] and len(script) > 1_000_000 for script in scripts)
    parsed = elements(page)
    assert not [
        e
        for e in parsed.elements
        if e.tag in ("script", "link", "img") and ("src" in e.attributes or "href" in e.attributes)
    ]
    assert all(e.attributes["href"].startswith("#") for e in parsed.having("a"))
    assert not parsed.having("section", id="comparison")  # none asked for


def test_each_run_has_its_evidence(two_sets, elements) -> None:  # type: ignore[no-untyped-def]
    sets, library = two_sets
    page = render_report(sets, library, None, created_unix=1.0)
    text = "".join(elements(page).text)
    assert "The baseline itself (a no-op)" in text
    assert "+++ candidate/kernel.py" in text and "-    _add[(triton.cdiv(n, 128),)]" in text
    assert "+    _add[(triton.cdiv(n, 512),)]" in text
    assert "<tool>edit kernel.py</tool>" in text  # the transcript, as text
    evaluation = sets[1].runs[0].evaluation
    for value in (evaluation.task_digest, evaluation.harness_version, evaluation.environment.fingerprint):
        assert value in text
    assert "none (run on the host" in text  # no image digest recorded
    assert '"candidate_digest"' in text  # the evaluation record
    assert "model: m-1" in text


def test_text_from_files_is_escaped(two_sets, elements) -> None:  # type: ignore[no-untyped-def]
    sets, library = two_sets
    page = render_report(sets, library, None, created_unix=1.0)
    assert "<b>x</b>" not in page and "agent &lt;b&gt;x&lt;/b&gt;" in page
    assert "<tool>" not in page


def test_figures_only_where_there_is_something_to_plot(two_sets, elements) -> None:  # type: ignore[no-untyped-def]
    sets, library = two_sets
    untimed = [ResultSet(s.name, tuple(r for r in s.runs if r.agent.cost_usd is None)) for s in sets]
    page = render_report(untimed, library, None, created_unix=1.0)
    parsed = elements(page)
    assert not parsed.having("div", id="plot-cost")
    assert "No run recorded a cost" in page
    assert parsed.having("div", id="plot-speedup-triton2triton")


def test_two_sets_without_a_shared_task_say_so(two_sets) -> None:  # type: ignore[no-untyped-def]
    sets, library = two_sets
    elsewhere = ResultSet("elsewhere", tuple(replace(run, evaluation=replace(run.evaluation, task="tasks/x/y:y"))
                                             for run in sets[1].runs))  # fmt: skip
    page = render_report([sets[0], elsewhere], library, compare_sets(sets[0], elsewhere), created_unix=1.0)
    assert "share no task: nothing to compare" in page and "nan" not in page.split("<body>")[1]
