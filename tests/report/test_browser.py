"""Open the report in a real headless Chromium: it renders, shows every head, logs no errors.

Skipped when ``/usr/bin/chromium`` is absent (CI installs Debian's ``chromium``). The
screenshot is kept as a test artifact under the session's tmp directory
(``<tmp>/browser/report.png``; its path is printed).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from report_inputs import built_report

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
    # software WebGL for the 3-D scatter (the implicit fallback is deprecated in Chromium)
    "--enable-unsafe-swiftshader",
    # let the page's promises settle before the DOM is dumped / the screenshot is taken
    "--virtual-time-budget=20000",
)

@pytest.fixture(scope="module")
def report_dir(tmp_path_factory):
    return built_report(tmp_path_factory)


def _chromium(args: list[str], profile: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True, text=True, timeout=180, check=False,
    )


@pytest.fixture(scope="module")
def browser_run(report_dir, tmp_path_factory):
    if not CHROMIUM.exists():
        pytest.skip("no /usr/bin/chromium here (CI installs Debian's chromium package)")
    _, path, facts = report_dir
    work = tmp_path_factory.mktemp("browser")
    url = path.resolve().as_uri()
    dom = _chromium(["--enable-logging=stderr", "--v=0", "--dump-dom", url], work / "profile1")
    shot = work / "report.png"
    snap = _chromium(["--window-size=1280,2200", f"--screenshot={shot}", url], work / "profile2")
    print(f"report screenshot: {shot}")
    return dom, snap, shot, facts


def test_report_renders_in_chromium(browser_run) -> None:
    dom, _, _, _ = browser_run
    assert dom.returncode == 0, dom.stderr[-2000:]
    body = re.search(r"<body[^>]*>", dom.stdout)
    assert body is not None
    assert 'data-rendered="1"' in body.group(0), body.group(0)
    assert "data-render-error" not in body.group(0)
    # plotly drew its SVG/WebGL layers into the figures
    assert dom.stdout.count('class="main-svg"') >= 4


def test_tetrahedron_shows_every_head(browser_run) -> None:
    dom, _, _, facts = browser_run
    tag = re.search(r'<div[^>]*id="fig-tetrahedron"[^>]*>', dom.stdout)
    assert tag is not None
    count = re.search(r'data-point-count="(-?\d+)"', tag.group(0))
    assert count is not None and int(count.group(1)) == facts["heads"]


def test_no_uncaught_errors_in_the_console(browser_run) -> None:
    dom, _, _, _ = browser_run
    bad = [line for line in dom.stderr.splitlines() if "Uncaught" in line]
    assert not bad, bad


def test_screenshot_is_saved(browser_run) -> None:
    _, snap, shot, _ = browser_run
    assert snap.returncode == 0, snap.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20000
