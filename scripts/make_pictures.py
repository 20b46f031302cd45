"""
Draw the documentation's pictures into ``docs/images/`` as plain SVG text, each computed with
the package's own classes: ``python scripts/make_pictures.py [OUT_DIR]``.

- ``dst-days.svg``: the UTC hours of New York's 23-, 24- and 25-hour days (``temporal.md``);
- ``business-week.svg``: a US business week with Thanksgiving (``business.md``);
- ``sliding-window.svg``: trailing 7-day windows (``concepts.md``);
- ``retail-year.svg``: the months of a 4-5-4 retail year (``retail.md``);
- ``trading-week.svg``: the NYSE's 30-minute bars in the week of Thanksgiving 2026, with its
  early close (``trading.md``).

The output is deterministic; ``tests/unit/test_pictures.py`` checks it equals the committed
files, so rerun this script after changing what they show.
"""

from __future__ import annotations

import sys
from datetime import date, timedelta
from pathlib import Path
from xml.sax.saxutils import escape

from airflow_partitions import (
    BusinessCalendar,
    BusinessDayWindow,
    Day,
    ExchangeCalendar,
    GrainPartitionTimetable,
    Hour,
    IsoWeek,
    Minutes,
    RetailMonth,
    RetailYear,
    SlidingWindow,
    TemporalMapper,
    TemporalRollupMapper,
    TemporalWindow,
    TradingSession,
)

OUT = Path(__file__).resolve().parents[1] / "docs" / "images"
FONT = "font-family:sans-serif;font-size:12px"
MEMBER, OTHER, TEXT = "#4a90d9", "#d0d0d0", "#222"


class Svg:
    def __init__(self, width: int, height: int, title: str):
        self.width, self.height = width, height
        self.parts = [
            f"<title>{escape(title)}</title>",
            f'<rect width="{width}" height="{height}" fill="#fff"/>',
        ]

    def rect(self, x: float, y: float, w: float, h: float, fill: str) -> None:
        self.parts.append(
            f'<rect x="{x:g}" y="{y:g}" width="{w:g}" height="{h:g}" fill="{fill}" stroke="#fff"/>'
        )

    def text(
        self, x: float, y: float, s: str, *, anchor: str = "start", size: int = 12, color: str = TEXT
    ) -> None:
        self.parts.append(
            f'<text x="{x:g}" y="{y:g}" text-anchor="{anchor}" font-size="{size}" fill="{color}">'
            f"{escape(s)}</text>"
        )

    def render(self) -> str:
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width}" height="{self.height}" '
            f'viewBox="0 0 {self.width} {self.height}" style="{FONT}">'
        )
        return "\n".join([head, *self.parts, "</svg>", ""])


def dst_days() -> str:
    """New York days of 23, 24 and 25 hours, as the UTC hour keys a rollup waits for."""
    rollup = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day(timezone="America/New_York"), input_timezone="UTC"),
        window=TemporalWindow(Hour()),
    )
    days = ["2026-03-08", "2026-03-09", "2026-11-01"]
    cell, left, top = 26, 150, 40
    svg = Svg(left + 25 * cell + 20, top + len(days) * 44 + 30, "New York days against UTC hours")
    svg.text(
        10,
        20,
        "TemporalMapper(Day(timezone='America/New_York'), input_timezone='UTC'): the UTC hours awaited",
    )
    for row, day in enumerate(days):
        members = sorted(rollup.to_upstream(day))
        y = top + row * 44
        svg.text(10, y + 18, f"{day}: {len(members)} h")
        for i, key in enumerate(members):
            svg.rect(left + i * cell, y, cell, 26, MEMBER)
            svg.text(left + i * cell + cell / 2, y + 17, key[-2:], anchor="middle", size=10, color="#fff")
        svg.text(left, y + 38, f"{members[0]}Z … {members[-1]}Z", size=10)
    svg.text(
        10,
        top + len(days) * 44 + 18,
        "cells: the UTC hour of each key (DST starts 2026-03-08, ends 2026-11-01)",
        size=10,
    )
    return svg.render()


def business_week() -> str:
    """The US business days of the week of Thanksgiving 2026."""
    calendar = BusinessCalendar(country="US")
    rollup = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(IsoWeek()), window=BusinessDayWindow(calendar)
    )
    members = set(rollup.to_upstream("2026-W48"))
    cell, left, top = 90, 10, 40
    svg = Svg(left + 7 * cell + 10, top + 80, "A US business week with Thanksgiving")
    svg.text(10, 20, "BusinessDayWindow(BusinessCalendar(country='US')) for the week 2026-W48")
    for i in range(7):
        day = date(2026, 11, 23) + timedelta(days=i)
        key = day.isoformat()
        svg.rect(left + i * cell, top, cell, 40, MEMBER if key in members else OTHER)
        color = "#fff" if key in members else TEXT
        svg.text(left + i * cell + cell / 2, top + 17, day.strftime("%a"), anchor="middle", color=color)
        svg.text(left + i * cell + cell / 2, top + 32, key[5:], anchor="middle", size=10, color=color)
        if key not in members:
            why = "weekend" if day.weekday() >= 5 else "holiday"
            svg.text(left + i * cell + cell / 2, top + 56, why, anchor="middle", size=10)
    svg.text(10, top + 74, f"awaited: {len(members)} keys, {', '.join(sorted(members))}", size=10)
    return svg.render()


def sliding_window() -> str:
    """Trailing 7-day windows ending 2026-03-09, -10 and -11, and the windows one day feeds."""
    rollup = TemporalRollupMapper(upstream_mapper=TemporalMapper(Day()), window=SlidingWindow(Day(), 7))
    first = date(2026, 3, 1)
    cell, left, top = 34, 130, 50
    ends = ["2026-03-09", "2026-03-10", "2026-03-11"]
    fed = set(rollup.to_downstream("2026-03-05"))
    svg = Svg(left + 14 * cell + 10, top + (len(ends) + 1) * 32 + 20, "Trailing 7-day windows")
    svg.text(
        10, 20, "TemporalRollupMapper(upstream_mapper=TemporalMapper(Day()), window=SlidingWindow(Day(), 7))"
    )
    for i in range(14):
        svg.text(left + i * cell + cell / 2, top - 6, f"{first.day + i:02d}", anchor="middle", size=10)
    for row, end in enumerate(ends):
        members = set(rollup.to_upstream(end))
        y = top + row * 32
        svg.text(10, y + 17, f"run {end}")
        for i in range(14):
            key = (first + timedelta(days=i)).isoformat()
            svg.rect(left + i * cell, y, cell, 24, MEMBER if key in members else OTHER)
    y = top + len(ends) * 32 + 16
    svg.text(10, y, f"the key 2026-03-05 counts towards {len(fed)} runs: {min(fed)} … {max(fed)}", size=10)
    return svg.render()


def retail_year() -> str:
    """The twelve months of retail year 2026 (4-5-4), as wide as their weeks."""
    year = TemporalMapper(RetailYear()).downstream_period("2026-03-10")
    rollup = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(RetailYear()), window=TemporalWindow(RetailMonth())
    )
    months = [
        TemporalMapper(RetailMonth()).downstream_period(key) for key in sorted(rollup.to_upstream(year.key))
    ]
    week, left, top = 14, 10, 40
    weeks = [(m.end - m.start).days // 7 for m in months]
    svg = Svg(left + sum(weeks) * week + 10, top + 76, "A 4-5-4 retail year")
    svg.text(
        10, 20, f"RetailMonth() in {year.key}: {year.start.date()} to {(year.end - timedelta(days=1)).date()}"
    )
    x = left
    for i, (month, n) in enumerate(zip(months, weeks, strict=True)):
        svg.rect(x, top, n * week, 34, MEMBER if i % 2 == 0 else "#2c6aa8")
        svg.text(x + n * week / 2, top + 22, f"{n} wk", anchor="middle", size=10, color="#fff")
        svg.text(x + n * week / 2, top + 50, month.key[-3:], anchor="middle", size=10)
        x += n * week
    svg.text(
        10, top + 70, f"{sum(weeks)} weeks; months start on Sundays, {months[0].start.date()} first", size=10
    )
    return svg.render()


def trading_week() -> str:
    """The NYSE's 30-minute bars, Monday to Friday of Thanksgiving week 2026, and each session's run."""
    sessions = TradingSession(ExchangeCalendar("XNYS"))
    bars = TemporalWindow(Minutes(30, timezone="America/New_York"))
    rollup = TemporalRollupMapper(upstream_mapper=TemporalMapper(sessions), window=bars)
    producer = GrainPartitionTimetable(sessions, lag=timedelta(minutes=30))
    slots = [f"{9 + (30 + 30 * i) // 60:02d}:{(30 + 30 * i) % 60:02d}" for i in range(13)]  # 09:30 … 15:30
    cell, left, top, row = 40, 200, 50, 34
    days = [date(2026, 11, 23) + timedelta(days=i) for i in range(5)]
    title = "NYSE bars in Thanksgiving week 2026"
    svg = Svg(left + len(slots) * cell + 130, top + len(days) * row + 40, title)
    svg.text(
        10,
        20,
        "TemporalWindow(Minutes(30, timezone='America/New_York')) under "
        "TemporalMapper(TradingSession(ExchangeCalendar('XNYS')))",
    )
    for i, slot in enumerate(slots):
        svg.text(left + i * cell + cell / 2, top - 6, slot, anchor="middle", size=10)
    svg.text(left + len(slots) * cell + 10, top - 6, "run due (close + 30 min)", size=10)
    for r, day in enumerate(days):
        key, y = day.isoformat(), top + r * row
        try:
            awaited = {member[11:16] for member in rollup.to_upstream(key)}
        except ValueError:  # no session that day
            awaited = set()
        label = f"{day:%a} {key}: {len(awaited)} bars" if awaited else f"{day:%a} {key}: closed"
        svg.text(10, y + 17, label)
        for i, slot in enumerate(slots):
            svg.rect(left + i * cell, y, cell, 24, MEMBER if slot in awaited else OTHER)
        if awaited:
            due = producer.due(key).astimezone(sessions.tz)
            svg.text(left + len(slots) * cell + 10, y + 17, f"{due:%H:%M}", size=10)
    last = sessions.parse("2026-11-27")
    close = f"{last.end.astimezone(sessions.tz):%H:%M}"
    svg.text(
        10,
        top + len(days) * row + 18,
        f"blue: awaited bars; Thanksgiving has no session; 2026-11-27 closes at {close} "
        f"(the run for it is due at {producer.due('2026-11-27').astimezone(sessions.tz):%H:%M})",
        size=10,
    )
    return svg.render()


PICTURES = {
    "dst-days.svg": dst_days,
    "business-week.svg": business_week,
    "sliding-window.svg": sliding_window,
    "retail-year.svg": retail_year,
    "trading-week.svg": trading_week,
}


def main(out: Path = OUT) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, draw in PICTURES.items():
        path = out / name
        path.write_text(draw(), encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    for path in main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT):
        print(path)
