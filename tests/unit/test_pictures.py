"""scripts/make_pictures.py runs and writes exactly the committed pictures of docs/images/."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("make_pictures", ROOT / "scripts" / "make_pictures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_pictures_are_up_to_date(tmp_path):
    written = _script().main(tmp_path)
    assert [p.name for p in written] == [
        "dst-days.svg",
        "business-week.svg",
        "sliding-window.svg",
        "retail-year.svg",
        "trading-week.svg",
    ]
    for path in written:
        committed = ROOT / "docs" / "images" / path.name
        assert committed.read_text(encoding="utf-8") == path.read_text(encoding="utf-8"), (
            f"docs/images/{path.name} is stale: run python scripts/make_pictures.py"
        )


def test_the_pictures_show_what_the_pages_say():
    images = ROOT / "docs" / "images"
    dst = (images / "dst-days.svg").read_text(encoding="utf-8")
    assert "2026-03-08: 23 h" in dst and "2026-03-09: 24 h" in dst and "2026-11-01: 25 h" in dst
    week = (images / "business-week.svg").read_text(encoding="utf-8")
    assert "awaited: 4 keys, 2026-11-23, 2026-11-24, 2026-11-25, 2026-11-27" in week
    assert "7 runs: 2026-03-05 … 2026-03-11" in (images / "sliding-window.svg").read_text(encoding="utf-8")
    assert "52 weeks" in (images / "retail-year.svg").read_text(encoding="utf-8")
    trading = (images / "trading-week.svg").read_text(encoding="utf-8")
    assert "Fri 2026-11-27: 7 bars" in trading and "Thu 2026-11-26: closed" in trading
    assert "Mon 2026-11-23: 13 bars" in trading and "2026-11-27 closes at 13:00" in trading
    pages = {
        "dst-days.svg": "temporal.md",
        "business-week.svg": "business.md",
        "sliding-window.svg": "concepts.md",
        "retail-year.svg": "retail.md",
        "trading-week.svg": "trading.md",
    }
    for picture, page in pages.items():
        assert f"images/{picture}" in (ROOT / "docs" / page).read_text(encoding="utf-8"), page
