"""
Exchange calendars and trading sessions: which dates an exchange trades, from when to when.

- :class:`ExchangeCalendar`: the sessions of one exchange (``ExchangeCalendar("XNYS")``), as the
  ``exchange_calendars`` package computes them: session dates, open and close instants, early
  closes, late opens and lunch breaks, for some 50 exchanges named by their ISO 10383 MIC. A
  frozen, hashable value; as a business calendar (for :class:`~airflow_partitions.grains.
  business.BusinessDay` and ``BusinessDayWindow``) its session dates are the business days.
- :class:`TradingSession`: the grain whose periods are an exchange's sessions, from the open to
  the close, keyed by the session date (``2026-11-27``). ``TemporalMapper(TradingSession(cal),
  offset=-1)`` maps a key to the session before it (T-1); ``TemporalWindow(Minutes(30,
  timezone="America/New_York"))`` under it waits for the session's bars (13 on a full New York
  session, 7 on the early close of 2026-11-27).

``exchange_calendars`` (Apache-2.0) pulls in pandas, which the rest of the package does not need,
so it is an optional extra: ``pip install "airflow-partitions[exchanges]"``. It is imported when
the first :class:`ExchangeCalendar` is built, not when this module is (the time layer imports no
Airflow and nothing heavy; ``tests/unit/grains/test_pure.py``).

Pure (no Airflow import), and no I/O: ``exchange_calendars`` computes sessions from the rules in
its own code. Its ``get_calendar`` defaults to the twenty years before today and the one after,
which would make a key's session depend on the clock; here sessions are computed per decade of
session dates (2020 to 2029), once per process and exchange, in a bounded process-wide cache, and
read as plain tuples of UTC instants: mapping a key is a dictionary look-up and a bisection, with
no pandas on the way. The scheduler rebuilds our objects from their stored form every tick; equal
calendars share the entries.

**Upgrading exchange_calendars.** As for the ``holidays`` library (:mod:`~airflow_partitions.
grains.business`): the stored form is the exchange's code, not its sessions, so a new release of
``exchange_calendars`` that adds a closure (a national day of mourning) or moves a close changes
what pending rollups wait for from the scheduler's next restart, without deleting them.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from airflow_partitions.grains.days import _as_date, _require_roll
from airflow_partitions.grains.grain import Grain, Period
from airflow_partitions.grains.keys import OutsideCalendar, parse_instant, read_dated
from airflow_partitions.grains.stored import dump, load

if TYPE_CHECKING:
    from zoneinfo import ZoneInfo

#: How to install what :class:`ExchangeCalendar` needs.
EXTRA = 'pip install "airflow-partitions[exchanges]"'
#: What :class:`TradingSession` does with an instant outside every session: refuse it (``"raise"``),
#: or take the next or the previous session.
OUTSIDE = ("raise", "next", "previous")
#: The years pandas' nanosecond timestamps hold whole (1677-09-21 to 2262-04-11): the widest
#: span of session dates ``exchange_calendars`` can compute, when a calendar sets no bounds.
_PANDAS_YEARS = (1678, 2261)
#: The year whose decade an :class:`ExchangeCalendar` computes when it is built (fixed: no clock).
_PROBE_YEAR = 2026
#: Session dates are computed this many years at a time (``2020`` to ``2029``): one computation
#: costs about as much for one year as for ten (0.15 to 0.4 s, measured), once per process.
_CHUNK_YEARS = 10


def _library() -> Any:
    """Return the ``exchange_calendars`` module, imported now (the first calendar built imports it)."""
    try:
        import exchange_calendars
    except ImportError as err:
        raise ImportError(
            f"ExchangeCalendar needs the exchange_calendars package, an optional extra of "
            f"airflow-partitions: {EXTRA}."
        ) from err
    return exchange_calendars


def _library_version() -> str:
    try:
        return version("exchange_calendars")
    except PackageNotFoundError:  # pragma: no cover - installed without metadata
        return "(unknown version)"


class _Exchange(NamedTuple):
    """What ``exchange_calendars`` says of one exchange before any session is computed."""

    #: The canonical name (an alias resolved): ``"XNYS"`` for ``"NYSE"``.
    name: str
    factory: Any
    timezone: str
    first_year: int
    last_year: int


@lru_cache(maxsize=128)  # exchange_calendars knows about 60 exchanges, and their aliases
def _exchange(code: str) -> _Exchange:
    """
    Return the calendar class, zone and years of the exchange *code* (a name or an alias).

    :raises ValueError: if ``exchange_calendars`` knows no calendar of that name.
    """
    xcals = _library()
    names = xcals.get_calendar_names(include_aliases=True)
    if code not in names:
        canonical = ", ".join(xcals.get_calendar_names(include_aliases=False))
        raise ValueError(
            f"ExchangeCalendar: {code!r} is not an exchange of exchange_calendars {_library_version()}; "
            f"expected an ISO 10383 MIC or an alias it lists, such as 'XNYS', 'XLON' or 'NYSE': {canonical}."
        )
    name = xcals.resolve_alias(code)
    # The calendar class, as get_calendar would build it, but with explicit bounds (get_calendar's
    # default bounds depend on today's date) and without its one-calendar-per-name cache.
    factory = xcals.calendar_utils.global_calendar_dispatcher._calendar_factories[name]
    low, high = factory.bound_min(), factory.bound_max()
    first, last = _PANDAS_YEARS
    if low is not None:
        first = max(first, low.year + (0 if (low.month, low.day) == (1, 1) else 1))
    if high is not None:
        last = min(last, high.year - (0 if (high.month, high.day) == (12, 31) else 1))
    return _Exchange(name, factory, factory.tz.key, first, last)


class _Year(NamedTuple):
    """The sessions of one exchange whose dates lie in one year, in order (UTC instants)."""

    #: Session dates as proleptic ordinals (``date.toordinal``), ascending.
    ordinals: tuple[int, ...]
    #: Session dates, ``YYYY-MM-DD``: the keys.
    labels: tuple[str, ...]
    opens: tuple[datetime, ...]
    closes: tuple[datetime, ...]
    #: The lunch break of each session, ``(start, end)``, or ``None``.
    breaks: tuple[tuple[datetime, datetime] | None, ...]


def _utc(value: Any) -> datetime:
    """Return a pandas UTC timestamp as a ``datetime`` in :data:`datetime.UTC` (whole seconds)."""
    return datetime.fromtimestamp(value.value // 1_000_000_000, UTC)


@lru_cache(maxsize=64)
def _chunk(code: str, chunk: int) -> dict[int, _Year]:
    """Return the sessions of the years ``chunk * 10`` to ``chunk * 10 + 9``, by year (one computation)."""
    exchange = _exchange(code)
    first = max(exchange.first_year, chunk * _CHUNK_YEARS)
    last = min(exchange.last_year, chunk * _CHUNK_YEARS + _CHUNK_YEARS - 1)
    try:
        schedule = exchange.factory(start=f"{first:04d}-01-01", end=f"{last:04d}-12-31").schedule
    except Exception as err:  # the library's own failure (a rule pandas cannot apply): name it
        raise ValueError(
            f"ExchangeCalendar: exchange_calendars {_library_version()} (with pandas {version('pandas')}) "
            f"could not compute the sessions of {code} for {first} to {last}: {type(err).__name__}: "
            f"{str(err)[:200]}"
        ) from None
    rows: dict[int, list[tuple[date, datetime, datetime, tuple[datetime, datetime] | None]]] = {
        year: [] for year in range(first, last + 1)
    }
    columns = zip(
        schedule.index,
        schedule["open"],
        schedule["close"],
        schedule["break_start"],
        schedule["break_end"],
        strict=True,
    )
    for label, opened, closed, paused, resumed in columns:
        pause = None if paused != paused or resumed != resumed else (_utc(paused), _utc(resumed))  # NaT
        day = date(label.year, label.month, label.day)
        rows[day.year].append((day, _utc(opened), _utc(closed), pause))
    return {
        year: _Year(
            tuple(day.toordinal() for day, *_ in sessions),
            tuple(day.isoformat() for day, *_ in sessions),
            tuple(opened for _, opened, _, _ in sessions),
            tuple(closed for _, _, closed, _ in sessions),
            tuple(pause for *_, pause in sessions),
        )
        for year, sessions in rows.items()
    }


@dataclass(frozen=True)
class ExchangeCalendar:
    """
    One exchange's trading sessions, as ``exchange_calendars`` computes them: ``ExchangeCalendar("XNYS")``.

    A session has a date (its key, ``2026-11-27``), an open and a close, and possibly a lunch
    break: the New York Stock Exchange trades 09:30 to 16:00 New York time, and closes at 13:00
    on the day after Thanksgiving and on Christmas Eve (2026-11-27 and 2026-12-24); Hong Kong
    trades 09:30 to 12:00 and 13:00 to 16:00; Tokyo 09:00 to 11:30 and 12:30 to 15:30. Exchanges
    are named by their ISO 10383 MIC (``"XNYS"``, ``"XLON"``, ``"XHKG"``, ``"XTKS"``) or an alias
    ``exchange_calendars`` lists (``"NYSE"`` is ``"XNYS"``: the two calendars are equal);
    ``exchange_calendars.get_calendar_names()`` lists them.

    As a business calendar (``BusinessDay(ExchangeCalendar("XNYS"), timezone="America/New_York")``,
    ``BusinessDayWindow(ExchangeCalendar("XNYS"))``), its session dates are the business days:
    :meth:`is_business_day`, :meth:`roll`, :meth:`shift` and :meth:`business_days` answer as
    :class:`~airflow_partitions.grains.business.BusinessCalendar`'s do. The sessions' hours are
    the :class:`TradingSession` grain's.

    Rules' sources: the exchange's, as encoded in the installed ``exchange_calendars`` release
    (computed from its code, no I/O); sessions exist for the years it can compute for the
    exchange (:attr:`first_year` to :attr:`last_year`: 1678 to 2261, pandas' limits, unless the
    exchange's calendar is bounded, such as Hong Kong's 1960 to 2049). Dates are ISO 8601
    calendar dates, ``YYYY-MM-DD``, in the exchange's time zone (:attr:`timezone`, IANA).

    Stored form: ``{"exchange": "XNYS", "format_version": 1}`` (the canonical name, aliases
    resolved).

    :param exchange: The exchange's MIC or an alias of ``exchange_calendars``.
    :raises ImportError: at construction, naming the extra to install, without ``exchange_calendars``.
    :raises ValueError: at construction, for an exchange ``exchange_calendars`` does not list
        (the message lists those it does), or whose sessions the installed release cannot compute
        (it computes the 2020s when the first calendar of an exchange is built: some calendars
        fail under pandas 3, such as Athens' Orthodox Easter rule).
    """

    exchange: str
    #: The exchange's IANA time zone, ``"America/New_York"`` for ``XNYS``.
    timezone: str = field(init=False, repr=False, compare=False)
    #: The first and last years with sessions (see the class docstring).
    first_year: int = field(init=False, repr=False, compare=False)
    last_year: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.exchange, str):
            raise ValueError(
                f"ExchangeCalendar: exchange must be an ISO 10383 MIC such as 'XNYS'; got {self.exchange!r}."
            )
        exchange = _exchange(self.exchange)
        object.__setattr__(self, "exchange", exchange.name)
        object.__setattr__(self, "timezone", exchange.timezone)
        object.__setattr__(self, "first_year", exchange.first_year)
        object.__setattr__(self, "last_year", exchange.last_year)
        # Computing one decade now (once per process and exchange: mapping needs it anyway) refuses
        # at Dag parse an exchange the installed exchange_calendars cannot compute.
        self._year(min(max(_PROBE_YEAR, self.first_year), self.last_year))

    def __repr__(self) -> str:
        return f"ExchangeCalendar({self.exchange!r})"

    # -- the session tables -------------------------------------------------------------------

    def _year(self, year: int) -> _Year:
        """
        Return the sessions dated in *year* (computed with their decade, once per process).

        :raises ValueError: for a year outside :attr:`first_year` to :attr:`last_year`.
        """
        if not self.first_year <= year <= self.last_year:
            raise ValueError(
                f"{self!r} has sessions for the years {self.first_year} to {self.last_year} only (as "
                f"exchange_calendars {_library_version()} computes them); got a date in {year}."
            )
        return _chunk(self.exchange, year // _CHUNK_YEARS)[year]

    def _at(self, year: int, index: int) -> tuple[int, int, _Year]:
        """Return session *index* of *year* (0 the first; counting across years) as (year, index, table)."""
        table = self._year(year)
        while index < 0:
            year -= 1
            table = self._year(year)
            index += len(table.labels)
        while index >= len(table.labels):
            index -= len(table.labels)
            year += 1
            table = self._year(year)
        return year, index, table

    def _locate(self, utc: datetime) -> tuple[int, int, bool]:
        """
        Return (year, index) of the last session opening at or before *utc*, and whether it is open then.

        Open means ``open <= utc < close`` (a lunch break included). A session dated in January
        can open in December (a futures session opening the evening before its date), so the
        following year's first sessions are looked at too.
        """
        year = utc.year
        table = self._year(year)
        index = bisect_right(table.opens, utc) - 1
        if index < 0 or index == len(table.opens) - 1:
            year, index, table = self._at(year, index)
            while True:
                try:
                    after = self._at(year, index + 1)
                except ValueError:  # past the last year with sessions
                    break
                if after[2].opens[after[1]] > utc:
                    break
                year, index, table = after
        return year, index, utc < table.closes[index]

    def _on_or_after(self, day: date) -> tuple[int, int, bool]:
        """Return (year, index) of the first session dated *day* or later, and whether it is dated *day*."""
        table = self._year(day.year)
        index = bisect_left(table.ordinals, day.toordinal())
        year, index, table = self._at(day.year, index)
        return year, index, table.ordinals[index] == day.toordinal()

    def _label(self, year: int, index: int) -> str:
        return self._year(year).labels[index]

    def _date(self, year: int, index: int) -> date:
        return date.fromordinal(self._year(year).ordinals[index])

    # -- a business calendar ------------------------------------------------------------------

    def is_business_day(self, day: date) -> bool:
        """
        Return whether the exchange has a session dated *day* (a ``datetime.date``; a datetime by its date).

        ``ExchangeCalendar("XNYS").is_business_day(date(2026, 11, 26))`` is false (Thanksgiving).

        :raises ValueError: if *day* is not a date, or lies outside :attr:`first_year` to :attr:`last_year`.
        """
        day = _as_date(day, "ExchangeCalendar.is_business_day")
        table = self._year(day.year)
        index = bisect_left(table.ordinals, day.toordinal())
        return index < len(table.ordinals) and table.ordinals[index] == day.toordinal()

    def roll(self, day: date, convention: str = "raise") -> date:
        """
        Return *day* if it is a session date, else the session date *convention* names.

        The conventions of :meth:`BusinessCalendar.roll <airflow_partitions.grains.business.
        BusinessCalendar.roll>` (``numpy.busday_offset``'s): ``"raise"``, ``"following"``,
        ``"preceding"``, ``"modifiedfollowing"``, ``"modifiedpreceding"``. With XNYS,
        ``roll(date(2026, 11, 26), "following")`` is 2026-11-27, ``"preceding"`` 2026-11-25.

        :raises OutsideCalendar: (a ``ValueError``) naming the day and its neighbouring sessions,
            for a day without a session under ``"raise"``.
        :raises ValueError: for an unknown convention or a *day* that is not a date.
        """
        day = _as_date(day, "ExchangeCalendar.roll")
        _require_roll(convention, "ExchangeCalendar.roll")
        year, index, exact = self._on_or_after(day)
        if exact:
            return day
        following, preceding = self._date(year, index), self._date(*self._at(year, index - 1)[:2])
        if convention == "raise":
            raise OutsideCalendar(
                f"{day.isoformat()} is not a session date of {self!r} (the previous session is "
                f"{preceding.isoformat()}, the next {following.isoformat()}); expected a session date, "
                "or a roll convention such as 'following' or 'preceding'."
            )
        forward = convention in ("following", "modifiedfollowing")
        rolled = following if forward else preceding
        if convention.startswith("modified") and rolled.month != day.month:
            return preceding if forward else following
        return rolled

    def shift(self, day: date, n: int, roll: str = "raise") -> date:
        """
        Return the session date *n* sessions after *day* (before it if *n* is negative).

        *day* is first rolled to a session date with *roll* (see :meth:`roll`), then moved, as
        ``numpy.busday_offset`` does: with XNYS, ``shift(date(2026, 11, 30), -1)`` is 2026-11-27
        and ``shift(date(2026, 11, 27), -1)`` is 2026-11-25 (Thanksgiving skipped).

        :raises ValueError: as :meth:`roll`; if *n* is not an integer; if the result lies outside
            :attr:`first_year` to :attr:`last_year`.
        """
        if not isinstance(n, int) or isinstance(n, bool):
            raise ValueError(f"ExchangeCalendar.shift: n must be a whole number of sessions; got {n!r}.")
        start = self.roll(day, roll)
        year, index, _ = self._on_or_after(start)
        return self._date(*self._at(year, index + n)[:2])

    def business_days(self, start: date, end: date) -> list[date]:
        """
        Return the session dates from *start* (included) to *end* (excluded), in order.

        ``ExchangeCalendar("XNYS").business_days(date(2026, 11, 23), date(2026, 11, 30))`` is
        2026-11-23, -24, -25 and -27. Size: at most the days between the two dates.

        :raises ValueError: if *start* or *end* is not a date, or a year between them has no sessions
            (outside :attr:`first_year` to :attr:`last_year`).
        """
        start = _as_date(start, "ExchangeCalendar.business_days")
        end = _as_date(end, "ExchangeCalendar.business_days")
        found: list[int] = []
        for year in range(start.year, end.year + 1) if start < end else ():
            days = self._year(year).ordinals
            found.extend(days[bisect_left(days, start.toordinal()) : bisect_left(days, end.toordinal())])
        return [date.fromordinal(o) for o in found]

    # -- the stored form ------------------------------------------------------------------------

    def serialize(self) -> dict[str, Any]:
        """Return ``{"exchange": "XNYS", "format_version": 1}``."""
        return dump(exchange=self.exchange)

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> ExchangeCalendar:
        """
        Rebuild a calendar from :meth:`serialize`'s output.

        :raises ImportError: as the constructor, without ``exchange_calendars``.
        :raises ValueError: as the constructor (an exchange the installed release no longer lists),
            or if *data* was written by a newer airflow-partitions.
        """
        return cls(load(data, cls)["exchange"])


def _clock(instant: datetime, tz: ZoneInfo) -> str:
    """Return ``13:00`` for *instant* in *tz*."""
    return f"{instant.astimezone(tz):%H:%M}"


@dataclass(frozen=True)
class TradingSession(Grain):
    """
    The trading sessions of an exchange, from the open to the close, keyed by date: ``2026-11-27``.

    ``TradingSession(ExchangeCalendar("XNYS"))``: a period is one session, the real instants from
    its open to its close, ``[open, close)``, in the exchange's time zone (``America/New_York``):
    ``2026-11-25`` is 09:30 to 16:00 New York time, ``2026-11-27`` 09:30 to 13:00 (an early close);
    Thanksgiving, 2026-11-26, and the weekend have no session. Keys are the session dates
    (``exchange_calendars``' session labels): the exchange's local date, also for a session that
    opens the evening before (CME's). A lunch break (Hong Kong 12:00 to 13:00, Tokyo 11:30 to
    12:30) lies inside its session: an instant in it maps to that session, but no member starts
    in it (:meth:`spans`): ``TemporalWindow(Minutes(30, timezone="Asia/Hong_Kong"))`` under a Hong
    Kong session waits for 11 bars, 09:30 … 11:30 and 13:00 … 15:30.

    **Keys.** A key with a time of day (``2026-11-27T10:15-05:00``, ``2026-11-27T15:15Z``, or a
    naive ``2026-11-27T10:15`` read in the exchange's zone) names the session open at that instant.
    A key without one (``2026-11-27``, ``20261127``) names the session of that date. An instant
    between two sessions (the night, a weekend, 14:00 after an early close) or a date without a
    session follows *outside*: ``"raise"`` (default) refuses it with a ``ValueError`` naming the
    instant, the exchange and the sessions before and after it (``TemporalMapper`` adds the key,
    and the scheduler audit-logs it as failed to map); ``"next"`` takes the next session (an
    evening's key counts for the next morning's session), ``"previous"`` the one before (a
    Saturday for Friday's session). Canonical keys (:meth:`parse`) are always session dates.

    **Offsets and windows.** :meth:`shift` moves by sessions: ``TemporalMapper(TradingSession(cal),
    offset=-1)`` maps ``2026-11-30`` to ``2026-11-27`` and ``2026-11-27`` to ``2026-11-25``.
    ``TemporalWindow(TradingSession(cal))`` under a week or month lists its sessions (the week of
    2026-11-23: ``2026-11-23``, ``-24``, ``-25``, ``-27``; ``tiles`` is false, as for business
    days); ``TemporalWindow(Minutes(30, timezone=cal.timezone))`` under ``TemporalMapper(
    TradingSession(cal))`` lists the bars starting within the session (13 from 09:30 to 15:30 on a
    full New York session, 7 on 2026-11-27); on a close off the bar grid the last bar is cut
    short at the close (ASX's 14:10 early close: 14:00 to 14:10, keyed ``2026-12-24T14:00+11:00``);
    a grain whose periods miss the open or a lunch break's bounds (``Hour()`` under a 09:30 open)
    is refused at Dag parse. ``GrainPartitionTimetable(
    TradingSession(cal))`` runs once per session as it closes (:mod:`~airflow_partitions.timetables`).

    Rules' sources: the exchange's, through :class:`ExchangeCalendar` (``exchange_calendars``);
    keys are ISO 8601 calendar dates; instants are read with the IANA time zone database.

    Stored form: ``{"calendar": {"exchange": "XNYS", "format_version": 1}, "format_version": 1,
    "kind": "trading_session", "outside": "raise"}``.

    :param calendar: The exchange's :class:`ExchangeCalendar`; the grain's zone is its zone.
    :param outside: What an instant outside every session maps to: ``"raise"`` (default),
        ``"next"`` or ``"previous"``.
    :raises ValueError: at construction, for a calendar that is not an :class:`ExchangeCalendar` or
        an unknown *outside*; for a date outside the years the calendar has sessions for.
    :raises OutsideCalendar: (a ``ValueError``, which the Partitions view and ``status`` tell from
        a key that cannot be read) from :meth:`floor` (under ``outside="raise"``), naming the
        instant and the sessions around it, for an instant outside every session; from
        :meth:`parse` and :meth:`dated_instant`, for a date without a session.
    """

    calendar: ExchangeCalendar
    outside: str = field(default="raise", kw_only=True)
    #: The exchange's IANA zone (the calendar's); not a parameter.
    timezone: str = field(default="UTC", init=False, repr=False)
    kind: ClassVar[str] = "trading_session"
    tiles: ClassVar[bool] = False
    cuts_last_member: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if not isinstance(self.calendar, ExchangeCalendar):
            raise ValueError(
                "TradingSession: calendar must be an ExchangeCalendar such as ExchangeCalendar('XNYS'); "
                f"got {self.calendar!r}."
            )
        if not isinstance(self.outside, str) or self.outside not in OUTSIDE:
            raise ValueError(
                f"TradingSession: outside must be one of {', '.join(map(repr, OUTSIDE))} (refuse an instant "
                f"outside every session, or take the next or the previous session); got {self.outside!r}."
            )
        object.__setattr__(self, "timezone", self.calendar.timezone)
        super().__post_init__()

    def __repr__(self) -> str:
        extra = "" if self.outside == "raise" else f", outside={self.outside!r}"
        return f"TradingSession({self.calendar!r}{extra})"

    # -- sessions as periods --------------------------------------------------------------------

    def _session(self, year: int, index: int) -> Period:
        """Return session number *index* of *year* as a period of this grain, its key known."""
        year, index, table = self.calendar._at(year, index)
        period = Period._between(table.opens[index], table.closes[index], self)
        period.__dict__["key"] = table.labels[index]
        return period

    def _position(self, instant: datetime) -> tuple[int, int]:
        """Return (year, index) of the session *instant* (aware) falls in, or the one *outside* names."""
        year, index, open_now = self.calendar._locate(instant.astimezone(UTC))
        if open_now or self.outside == "previous":
            return year, index
        if self.outside == "next":
            return self.calendar._at(year, index + 1)[:2]
        before = self._session(year, index)
        try:
            after: Period | None = self._session(year, index + 1)
        except ValueError:
            after = None
        local = instant.astimezone(self.tz)
        later = (
            f", the next, {after.key}, opens at {_clock(after.start, self.tz)}"
            if after is not None
            else ", and none follows"
        )
        raise OutsideCalendar(
            f"{local.isoformat()} is outside the trading sessions of {self.calendar.exchange} "
            f"({self.timezone}): the session before it, {before.key}, closed at "
            f"{_clock(before.end, self.tz)}{later}; expected an instant during a session, or "
            "TradingSession(..., outside='next') or outside='previous' to take the next or previous session."
        )

    def _at_open(self, period: Period) -> tuple[int, int]:
        """Return (year, index) of the session *period* is, found by its open."""
        opened = period.utc[0]
        year, index, _ = self.calendar._locate(opened)
        if self.calendar._year(year).opens[index] != opened:
            raise ValueError(
                f"{period.start.isoformat()} is not the open of a session of {self.calendar.exchange}; "
                f"{self!r} periods are its sessions."
            )
        return year, index

    def floor(self, instant: datetime) -> Period:
        """
        Return the session open at the aware *instant*, or the one *outside* names.

        :raises OutsideCalendar: (a ``ValueError``) under ``outside="raise"``, naming the instant, the
            exchange and the sessions before and after it, for an instant outside every session.
        """
        return self._session(*self._position(instant))

    def key_at(self, when: datetime, tz: ZoneInfo | None = None) -> str:
        """Return the date of the session holding *when* (naive: read in *tz*), without building a period."""
        aware = when if when.tzinfo else when.replace(tzinfo=tz or self.tz)
        return self.calendar._label(*self._position(aware))

    def key(self, period: Period) -> str:
        """Return the session's date, ``YYYY-MM-DD``."""
        return self.calendar._label(*self._at_open(period))

    def shift(self, period: Period, n: int) -> Period:
        """Return the session *n* sessions after *period* (before it if *n* is negative)."""
        year, index = self._at_open(period)
        return self._session(year, index + n)

    def dated_instant(self, wall: datetime) -> datetime:
        """
        Return the open of the session a date names (*wall*: its naive local midnight), for a mapper.

        A date without a session follows *outside* (the next or previous session's open).

        :raises OutsideCalendar: (a ``ValueError``) under ``outside="raise"``, naming the date and the
            sessions around it.
        """
        day = wall.date()
        year, index, exact = self.calendar._on_or_after(day)
        if not exact:
            if self.outside == "raise":
                raise self._no_session(day, year, index)
            if self.outside == "previous":
                year, index, _ = self.calendar._at(year, index - 1)
        return self.calendar._year(year).opens[index]

    def _no_session(self, day: date, year: int, index: int) -> OutsideCalendar:
        """Return the error for a *day* without a session, the next being session *index* of *year*."""
        before = self.calendar._label(*self.calendar._at(year, index - 1)[:2])
        return OutsideCalendar(
            f"{day.isoformat()} is not a session date of {self.calendar.exchange} (the session before it is "
            f"{before}, the next {self.calendar._label(year, index)}); expected the date of a session, or "
            "TradingSession(..., outside='next') or outside='previous' to take the next or previous session."
        )

    def _named_period(self, key: str) -> Period:
        when, dated = read_dated(key, None, self)
        if not dated:
            return self.floor(parse_instant(key, self.tz, None, self))
        year, index, exact = self.calendar._on_or_after(when.date())
        if not exact:  # a key names its own date: one without a session is refused whatever outside says
            raise self._no_session(when.date(), year, index)
        return self._session(year, index)

    def members(self, period: Period) -> list[Period]:
        """
        Return the sessions that open within *period*, in order.

        Under ``Week()`` or ``Month()`` in the exchange's zone, the week's or month's sessions (the
        week of 2026-11-23 on XNYS: ``2026-11-23``, ``-24``, ``-25``, ``-27``). Size: at most the
        period's days.
        """
        start, end = period.utc
        year, index, _ = self.calendar._locate(start)
        if self.calendar._year(year).opens[index] < start:
            year, index, _ = self.calendar._at(year, index + 1)
        members = []
        session = self._session(year, index)
        while session.utc[0] < end:
            members.append(session)
            year, index, _ = self.calendar._at(year, index + 1)
            session = self._session(year, index)
        return members

    def spans(self, period: Period) -> tuple[tuple[datetime, datetime], ...]:
        """
        Return the session's trading hours as UTC ``(start, end)`` pairs: one, or two around a lunch break.

        Hong Kong's 2026-11-27 is ``(01:30Z, 04:00Z)`` and ``(05:00Z, 08:00Z)`` (09:30 to 12:00 and
        13:00 to 16:00 local time); a New York session or a Hong Kong half day is its whole period.
        Members of a finer grain are listed within these (:meth:`Grain.members`).
        """
        year, index = self._at_open(period)
        pause = self.calendar._year(year).breaks[index]
        if pause is None:
            return (period.utc,)
        return (period.utc[0], pause[0]), (pause[1], period.utc[1])

    def period_at_or_after(self, instant: datetime) -> Period:
        """Return the session open at *instant*, else the next one (whatever *outside* says)."""
        year, index, open_now = self.calendar._locate(instant.astimezone(UTC))
        return self._session(year, index if open_now else index + 1)

    def _parameters(self) -> dict[str, Any]:
        return {"calendar": self.calendar.serialize(), "outside": self.outside}

    @classmethod
    def _from_parameters(cls, parameters: dict[str, Any]) -> TradingSession:
        return cls(ExchangeCalendar.deserialize(parameters["calendar"]), outside=parameters["outside"])
