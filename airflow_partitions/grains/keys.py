"""
Reading partition keys: ISO 8601 dates and times, period keys, ``strptime`` formats, labelled keys.

:func:`read_key` reads any ISO 8601 date or time that Python's ``datetime.fromisoformat`` reads
(``2026-07-30``, ``2026-07-30T09``, ``20260730T0915Z``, ``2026-07-30T09:15:30.25+02:00``,
``2026-W31-4`` …; ``2026-07-30T09.5`` is 09:30, as ISO 8601 reads a fraction of the hour) and our
period keys (``2026``, ``2026-03``, ``2026-Q1``, ``2026-W11``). A key
without an offset is naive: the caller reads it in a time zone. Labelled keys of fiscal and retail
calendars (``FY2026-Q3``) are read by the grain of their calendar. Also the limits every key
meets: Airflow's 250 characters, and the years 0003 to 9997.

Rules followed: ISO 8601 (calendar dates, ISO week dates, UTC offsets), RFC 3339 (``z`` for ``Z``).
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta
from functools import lru_cache
from typing import Any, Protocol
from zoneinfo import ZoneInfo


class KeyGrain(Protocol):
    """
    What reading a key asks of a grain: its time zone and the labelled keys of its calendar.

    :class:`~airflow_partitions.grains.grain.Grain` is one; this module does not import it (the
    grain base reads keys with this module).
    """

    @property
    def tz(self) -> ZoneInfo:
        """The grain's time zone."""

    def labelled_start(self, key: str, label: str, year: int, unit: str) -> datetime:
        """Return the naive local start of the period a labelled calendar *key* names."""


#: The years of the keys a mapper accepts: a period of any grain around them, its neighbours and
#: its members all lie within the years 1 to 9999 that Python's datetime holds (a key in 9999
#: would map to a period whose end, 10000-01-01, no datetime can hold).
FIRST_YEAR, LAST_YEAR = 3, 9997
#: Airflow's partition key column width (``ID_LEN``): longer keys are refused by the database.
MAX_KEY_LENGTH = 250
#: How many characters of a key an error message quotes (Airflow's keys hold at most 250).
SHOWN_KEY_LENGTH = 300


class OutsideCalendar(ValueError):
    """
    A day or time its calendar leaves out, refused by design: not a mistake in the key.

    ``BusinessCalendar().roll(date(2026, 3, 7))`` raises it for a Saturday, so a business-day
    mapper refuses the key ``2026-03-07`` with it, and a rollup refuses a key whose period no
    window awaits. Airflow audit-logs a refused key (``failed to map partition_key``) with the
    exception's class name, which tells these refusals from the keys that cannot be read at all
    (a plain ``ValueError``): the Partitions view and ``status`` list them apart. A ``ValueError``,
    as Airflow's contract for a key a mapper refuses asks.
    """


class OtherMember(ValueError):
    """
    A key for a member the window does not list: another Dag's, refused by design, not a mistake.

    A per-region Dag awaiting the stores of ``nsw`` refuses ``store-042|2026-04-05``, a ``vic``
    store, with it. Airflow audit-logs the exception's class name, so the Partitions view and
    ``status`` count these keys apart, as keys for other members, from the keys that cannot be
    read (a plain ``ValueError``) and the days a calendar leaves out (:class:`OutsideCalendar`).
    """


def refusal(cause: BaseException | None, message: str) -> ValueError:
    """
    Return a ``ValueError`` saying *message*, of *cause*'s kind if it is a refusal by design.

    :class:`OutsideCalendar` and :class:`OtherMember` keep their class; anything else is a ``ValueError``.

    For a refusal raised again with more said (the key, the window): a day its calendar leaves out,
    or a key for another Dag's member, stays a refusal by design however many layers name it.
    """
    return (type(cause) if isinstance(cause, OutsideCalendar | OtherMember) else ValueError)(message)


PERIOD_KEY = re.compile(r"(?P<y>\d{4})(?:-(?:(?P<m>\d{2})|Q(?P<q>[1-4])|W(?P<w>\d{2})))?")
#: An ISO week without a weekday, extended or basic (``2026-W11``, ``2026W11``): a week, although
#: ``date.fromisoformat`` reads it as its Monday.
ISO_WEEK_KEY = re.compile(r"(?P<y>\d{4})-?W(?P<w>\d{2})")
#: An ISO week date, with or without its weekday (``2026-W11``, ``2026W11``, ``2026-W11-2``): what
#: :func:`no_such_week` reads the year and week of.
_ISO_WEEK_DATE = re.compile(r"(?P<y>\d{4})(?P<dash>-?)W(?P<w>\d{2})(?:(?P=dash)\d)?")
#: A time of day whose lowest-order part is the hour or the minute with a decimal fraction (ISO
#: 8601-1:2019 5.3.1.4: ``T04.5`` is 04:30, ``T04:30,5`` and ``T0430.5`` are 04:30:30), which
#: ``datetime.fromisoformat`` would read as a fraction of a second.
_FRACTION_OF_HOUR_OR_MINUTE = re.compile(
    r"(?P<whole>.+[Tt]\d{2}(?P<minute>:?\d{2})?)[.,](?P<fraction>\d+)(?P<offset>[Zz]|[+-].+)?"
)
#: A period key of a fiscal or retail calendar: the calendar's label, a year and optionally a unit
#: letter and number (``FY2026``, ``FY2026-Q3``, ``R2026-M01``, ``R2026-W53``). The instants it
#: names depend on the calendar, so only a grain of that calendar reads it
#: (:meth:`~airflow_partitions.grains.grain.Grain.labelled_start`).
CALENDAR_KEY = re.compile(r"(?P<label>[A-Za-z]+)(?P<year>\d{4})(?:-(?P<unit>Q\d|[MW]\d{2}))?")
EXPECTED_KEYS = (
    "an ISO 8601 date or time such as '2026-07-30', '2026-07-30T09', '2026-07-30T09:15:00Z', "
    "'2026-07-30T09:15+02:00' or '20260730T0915Z', or a period key such as '2026', '2026-03', "
    "'2026-Q1' or '2026-W11'"
)


def is_key(value: Any) -> bool:
    """Return whether *value* can be a partition key: a non-blank ``str`` of at most 250 characters."""
    return isinstance(value, str) and bool(value.strip()) and len(value) <= MAX_KEY_LENGTH


#: What a terminal acts on instead of showing: the C0 and C1 controls and DEL, and Unicode's line
#: and paragraph separators and bidirectional controls (which reorder the text after them).
_OTHERS = r"\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_CONTROLS = re.compile(rf"[\x00-\x1f{_OTHERS}]")
_CONTROLS_BUT_LINE_FEEDS = re.compile(rf"[\x00-\x09\x0b-\x1f{_OTHERS}]")


def terminal(text: str, *, lines: bool = True) -> str:
    r"""
    Return *text* to print on a terminal: each control character escaped as Python spells it.

    ``terminal("2026-03-10\x1b[2J")`` (an ESC character) prints as ``2026-03-10\x1b[2J`` (a
    backslash, an x, …): the escape shows, it clears no screen. *lines*: the line feeds of a text
    of several lines are kept; with ``lines=False`` (one value: a key, an asset name, a message)
    they are escaped too (``\n``), so a key cannot start a line of its own.
    """
    pattern = _CONTROLS_BUT_LINE_FEEDS if lines else _CONTROLS
    return pattern.sub(lambda found: found[0].encode("unicode_escape").decode("ascii"), text)


def shown(key: Any) -> str:
    """Return ``repr(key)`` for an error message, a string cut to its first 300 characters."""
    return repr(key[:SHOWN_KEY_LENGTH] if isinstance(key, str) else key)


def read_key(key: str, input_format: str | None = None, grain: KeyGrain | None = None) -> datetime:
    """
    Return the date and time a partition key names, naive if the key carries no offset.

    Reads every ISO 8601 form ``datetime.fromisoformat`` reads (with ``z`` for ``Z``, as RFC 3339
    section 5.6 allows: ``2026-03-10T09:15:00z``; a decimal fraction of the hour or the minute as
    ISO 8601 means it, ``2026-03-10T09.5`` is 09:30, where ``fromisoformat`` would read 09:00:00.5),
    and the period keys ``YYYY``, ``YYYY-MM``,
    ``YYYY-Qn`` and ``YYYY-Www`` (their first instant). With *input_format*, reads the key with
    ``datetime.strptime`` instead (``"%Y%m%d"`` for ``20260730``). With a fiscal or retail
    *grain*, also reads the labelled keys of its calendar (``FY2026-Q3``, ``R2026-W05``): the
    start of the period they name, aware, in the grain's time zone.

    :raises ValueError: naming the key and the forms expected, if the key is not a string, has
        characters outside ASCII (``strptime`` and the period-key reader would read other
        scripts' digits, fullwidth or Arabic-Indic, as a date), or names no real date or time
        (``2026-02-30``).
    """
    return read_dated(key, input_format, grain)[0]


def read_dated(
    key: str, input_format: str | None = None, grain: KeyGrain | None = None
) -> tuple[datetime, bool]:
    """
    Return :func:`read_key`'s value and whether the key names a local date or period, no time of day.

    Date-only keys are the ISO 8601 dates ``2026-03-10``, ``20260310``, ``2026-W11-2`` and
    ``2026W112``, the period keys (``2026-03``, ``2026-W11``), labelled keys, and keys read with
    an *input_format* that has no time directive (``"%Y%m%d"``). They name a span of a local
    calendar, not an instant of some zone.

    :raises ValueError: as :func:`read_key`.
    """
    if not isinstance(key, str):
        raise ValueError(f"partition key {shown(key)} is not a string; expected {EXPECTED_KEYS}.")
    if not key.isascii():
        raise ValueError(
            f"partition key {shown(key)} has characters outside ASCII; only ASCII digits are read as a date "
            f"or time: expected {EXPECTED_KEYS}."
        )
    try:
        if input_format:
            return datetime.strptime(key, input_format), not has_time(input_format)
        # fromisoformat's dates are 7 to 10 characters; with a time of day a key has at least 10,
        # and only a 7-character date (2026W10) leaves room for one: 2026W10T09, not dashed.
        value = _read_iso(key[:-1] + "Z" if key[-1:] == "z" else key)
        return value, len(key) <= 10 and (len(key) < 10 or key[4] == "-")
    except ValueError as err:
        if not input_format and (week := no_such_week(key)):
            raise ValueError(f"partition key {shown(key)} {week}.") from None
        match = None if input_format else PERIOD_KEY.fullmatch(key)
        if match is None:
            labelled = None if input_format or grain is None else CALENDAR_KEY.fullmatch(key)
            if labelled is not None and grain is not None:
                label, year, unit = labelled["label"], int(labelled["year"]), labelled["unit"] or ""
                return grain.labelled_start(key, label, year, unit).replace(tzinfo=grain.tz), True
            expected = f"a key in the format {input_format!r}" if input_format else EXPECTED_KEYS
            raise ValueError(f"partition key {shown(key)} is not {expected} ({err}).") from None
        return _period_key_start(key, match), True


def iso_weeks(year: int) -> int:
    """Return how many ISO weeks *year* has: 52, or 53 (2026: its 28 December is in week 53)."""
    return date(year, 12, 28).isocalendar().week


def no_such_week(key: str) -> str | None:
    """
    Say why an ISO week date names no week, or ``None``: ``"names no week: 2021 has 52 ISO weeks"``.

    For ``2021-W53`` (2021 has 52 ISO weeks), ``2026-W00`` or ``2026W54``; ``None`` for a week that
    exists and for what is no ISO week date at all.
    """
    found = _ISO_WEEK_DATE.fullmatch(key)
    if found is None or int(found["y"]) < 1:  # year 0: no calendar to count
        return None
    year, week, weeks = int(found["y"]), int(found["w"]), iso_weeks(int(found["y"]))
    if 1 <= week <= weeks:
        return None
    return f"names no week: {year} has {weeks} ISO weeks ({year}-W01 … {year}-W{weeks})"


def _read_iso(key: str) -> datetime:
    """Return ``datetime.fromisoformat(key)``, but a fraction of an hour or minute read as ISO 8601 does."""
    if "." in key or "," in key:
        fraction = _FRACTION_OF_HOUR_OR_MINUTE.fullmatch(key)
        if fraction is not None:
            unit = 60 if fraction["minute"] else 3600  # seconds in the part the fraction is of
            digits = fraction["fraction"]
            whole = datetime.fromisoformat(fraction["whole"] + (fraction["offset"] or ""))
            return whole + timedelta(microseconds=int(digits) * unit * 10**6 // 10 ** len(digits))
    return datetime.fromisoformat(key)


def is_iso_date(key: str) -> bool:
    """
    Return whether *key* is an ISO 8601 date of one day (``2026-03-10``, ``20260310``, ``2026-W11-2``).

    Not an ISO week without its weekday (``2026-W11``, ``2026W11``): a week, which
    ``date.fromisoformat`` reads as its Monday.
    """
    if ISO_WEEK_KEY.fullmatch(key):
        return False
    try:
        date.fromisoformat(key)
    except ValueError:
        return False
    return True


@lru_cache(maxsize=64)
def has_time(input_format: str) -> bool:
    """Whether the ``strptime`` format reads a time of day or an offset (``%H``, ``%M``, ``%z`` …)."""
    return re.search(r"%[HIMSfpzcX]", input_format.replace("%%", "")) is not None


def parse_instant(
    key: str, tz: ZoneInfo, input_format: str | None = None, grain: KeyGrain | None = None
) -> datetime:
    """
    Return the aware instant a partition key names (:func:`read_key`); no offset means *tz*.

    :raises ValueError: as :func:`read_key`.
    """
    instant = read_key(key, input_format, grain)
    return instant if instant.tzinfo is not None else instant.replace(tzinfo=tz)


def _period_key_start(key: str, match: re.Match[str]) -> datetime:
    year, month, quarter, week = match["y"], match["m"], match["q"], match["w"]
    try:
        if week:
            return datetime.combine(date.fromisocalendar(int(year), int(week), 1), time())
        if quarter:
            return datetime(int(year), 3 * int(quarter) - 2, 1)
        return datetime(int(year), int(month or 1), 1)
    except ValueError as err:
        raise ValueError(f"partition key {shown(key)} is not {EXPECTED_KEYS} ({err}).") from None
