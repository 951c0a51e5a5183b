"""SVG board -> PNG through Debian's headless Chromium (for screenshots and the CLI).

Chromium opens a small HTML file embedding the SVG and saves a screenshot the size of the
SVG's ``width`` x ``height`` (times ``scale``).
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

BROWSERS = ("chromium", "chromium-browser", "google-chrome")


class NoBrowser(RuntimeError):
    """No Chromium on PATH (``apt-get install -y chromium``)."""


def find_browser() -> str:
    """The Chromium executable on PATH.

    Raises:
        NoBrowser: none of :data:`BROWSERS` is installed.
    """
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    raise NoBrowser("no Chromium found on PATH; install it with `apt-get install -y chromium`")


def svg_size(svg: str) -> tuple[int, int]:
    """The root element's ``width`` and ``height`` rounded up (pixels).

    Raises:
        ValueError: the root has no numeric width/height.
    """
    m = re.search(r'<svg[^>]*\swidth="([\d.]+)"[^>]*\sheight="([\d.]+)"', svg)
    if not m:
        raise ValueError("the SVG root has no numeric width and height")
    return math.ceil(float(m[1])), math.ceil(float(m[2]))


def svg_to_png(svg: str, out: Path, scale: float = 1.0, timeout: float = 90.0) -> Path:
    """Write ``svg`` as a PNG to ``out`` (``scale`` = device pixels per SVG unit).

    Raises:
        NoBrowser: Chromium is not installed.
        RuntimeError: Chromium failed or wrote no file (its stderr tail in the message).
    """
    browser = find_browser()
    w, h = svg_size(svg)
    out = Path(out).resolve()
    with tempfile.TemporaryDirectory(prefix="roundhouse-board-") as tmp:
        page = Path(tmp) / "board.html"
        page.write_text(
            '<!doctype html><html><head><meta charset="utf-8"></head>'
            f'<body style="margin:0;background:#fff">{svg}</body></html>',
            encoding="utf-8",
        )
        cmd = [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--user-data-dir={tmp}/profile",
            f"--force-device-scale-factor={scale}",
            f"--window-size={w},{h}",
            f"--screenshot={out}",
            page.as_uri(),
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0 or not out.exists():
        raise RuntimeError(f"chromium failed ({proc.returncode}): {proc.stderr[-400:]}")
    return out
