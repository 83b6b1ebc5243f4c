"""The report as a browser shows it: headless Chromium (Debian's `chromium`) loads report.html from
disk with no network, runs its scripts, and the DOM it dumps holds the tables and the plots plotly
drew; the page logs nothing to the console (no uncaught exception, no console.error). The
screenshot is kept under the test's output: dist/test/<this target>/ under Pants (its
extra-output/ folder), else pytest's tmp_path.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from arena.report.compare import compare_sets
from arena.report.page import render_report

CHROMIUM = shutil.which("chromium")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed here (apt-get install chromium; .ci/run installs it)"
)
PANTS_EXTRA_OUTPUT = Path("extra-output")  # Pants copies this sandbox folder to dist/test/<target>/
BROWSER_TIMEOUT_S = 120
# Chromium writes each console message to stderr as: ...:INFO:CONSOLE:<line>] "<message>", source: <url> (<line>)
CONSOLE_LINE = re.compile(r":CONSOLE(?::\d+)?\]\s*(.*)")
PLOTS = ("plot-speedup-triton2triton", "plot-distribution", "plot-cost", "plot-comparison")


@dataclass(frozen=True)
class Browsed:
    dom: str  # the DOM after the page's scripts ran
    console: list[str]  # every console message the page logged
    screenshot: Path


def browse(page: Path, out: Path) -> Browsed:
    """Load `page` twice in headless Chromium: once to dump the DOM, once for a screenshot."""
    assert CHROMIUM is not None
    out.mkdir(parents=True, exist_ok=True)
    common = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
        f"--user-data-dir={out / 'profile'}", "--enable-logging=stderr", "--v=0", "--window-size=1400,2400",
    ]  # fmt: skip
    environment = {**os.environ, "HOME": str(out)}  # a profile and caches of its own, not the caller's
    screenshot = out / "report.png"
    dumped = subprocess.run(
        [*common, "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=BROWSER_TIMEOUT_S,
        env=environment,
    )
    shot = subprocess.run(
        [*common, f"--screenshot={screenshot}", page.as_uri()],
        capture_output=True, text=True, timeout=BROWSER_TIMEOUT_S, env=environment,
    )  # fmt: skip
    assert dumped.returncode == 0 and shot.returncode == 0, dumped.stderr[-2000:] + shot.stderr[-2000:]
    console = [m.group(1) for line in (dumped.stderr + shot.stderr).splitlines() if (m := CONSOLE_LINE.search(line))]
    return Browsed(dumped.stdout, console, screenshot)


def keep(path: Path) -> None:
    """Copy `path` to Pants' extra output, when running under Pants (the folder exists in its sandbox)."""
    if PANTS_EXTRA_OUTPUT.is_dir():
        shutil.copy(path, PANTS_EXTRA_OUTPUT / path.name)


def test_the_console_check_catches_a_script_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken.html"
    broken.write_text(
        '<!DOCTYPE html><html><body><script>console.error("drawn wrong"); notDefined();</script></body></html>'
    )
    browsed = browse(broken, tmp_path / "browser")
    assert any("drawn wrong" in message for message in browsed.console)
    assert any(message.startswith('"Uncaught ReferenceError') for message in browsed.console)


def test_the_report_renders_in_chromium_with_its_tables_and_plots(two_sets, elements, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    sets, library = two_sets
    page = tmp_path / "report.html"
    page.write_text(render_report(sets, library, compare_sets(sets[0], sets[1])), encoding="utf-8")
    browsed = browse(page, tmp_path / "browser")
    keep(browsed.screenshot)
    keep(page)
    assert browsed.console == [], browsed.console
    parsed = elements(browsed.dom)
    for css in ("summary", "runs", "comparison"):
        assert parsed.having("table", **{"class": css}), css
    for plot in PLOTS:
        [div] = parsed.having("div", id=plot)
        assert "js-plotly-plot" in div.attributes["class"].split(), f"plotly did not draw {plot}"
    # Every figure drew its SVG: bars of the per-task and comparison plots, the boxes, the cost points.
    assert len(parsed.having("svg", **{"class": "main-svg"})) >= len(PLOTS)
    assert parsed.having("g", **{"class": "trace bars"}) and parsed.having("g", **{"class": "trace boxes"})
    assert browsed.screenshot.stat().st_size > 10_000  # a page drawn, not a blank one
