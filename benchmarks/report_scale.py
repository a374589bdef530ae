"""The HTML report at scale: 7,000 queries x 5 systems (docs/report.md, "Large inputs").

    PYTHONPATH=. python benchmarks/report_scale.py [--folder /tmp/harness-report-scale] [--browser]

Writes the synthetic input of tests/reports/big_inputs.py once (reused), then builds the page
with each paired test (``harness report``, fresh interpreter, wall time and peak RSS) and prints
its size. With ``--browser`` it opens the page in headless Chromium (selenium + chromedriver) and
prints the Navigation Timing of two loads and the number of DOM elements.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def build(folder: Path, test: str) -> Path:
    page = folder / f"report-{test}.html"
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "harness", "report", str(folder / "big"), "--dataset",
                    str(folder / "big-data"), "-o", str(page), "--test", test], check=True, stdout=subprocess.DEVNULL)
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"--test {test}: {time.perf_counter() - started:.1f} s, peak RSS so far {rss:.0f} MiB, "
          f"{page.stat().st_size:,} bytes ({page.stat().st_size / 2 ** 20:.2f} MiB)")
    return page


def browse(page: Path) -> None:
    from tests.reports.browser import CHROMIUM_OPTIONS
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for argument in (*CHROMIUM_OPTIONS, f"--user-data-dir={tempfile.mkdtemp()}"):
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))
    try:
        for attempt in ("first", "second"):
            driver.get(page.as_uri())
            loaded = driver.execute_script("const n = performance.getEntriesByType('navigation')[0];"
                                           "return [n.domContentLoadedEventEnd, n.loadEventEnd];")
            print(f"{attempt} load: DOMContentLoaded {loaded[0]:.0f} ms, load {loaded[1]:.0f} ms")
        print("DOM elements:", driver.execute_script("return document.getElementsByTagName('*').length"))
    finally:
        driver.quit()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, default=Path(tempfile.gettempdir()) / "harness-report-scale")
    parser.add_argument("--browser", action="store_true")
    args = parser.parse_args()
    if not (args.folder / "big").is_dir():
        from tests.reports.big_inputs import big_inputs

        args.folder.mkdir(parents=True, exist_ok=True)
        big_inputs(args.folder)
    build(args.folder, "t")
    page = build(args.folder, "randomization")
    if args.browser:
        browse(page)


if __name__ == "__main__":
    main()
