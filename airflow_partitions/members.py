"""
The members a window lists for a dimension: plain values, values with dates, or an Airflow Variable's.

``DimensionWindow(store=[...])`` lists the stores a rollup waits for. A listed member is a value
(``"store-042"``) or a :class:`Member` with dates: ``Member("store-009", start="2026-04-06")`` is
awaited only by the periods of the time dimension that begin on or after 2026-04-06, and its
keys of earlier days are refused naming its dates. :class:`VariableMembers` lists the JSON value
of an Airflow Variable instead, so a store can join or leave without a redeploy: the stored form
names the Variable only, and each process reads its value through a cache that holds a read for
:data:`VARIABLE_TTL` seconds (60).

A member may also carry a ``group``: under a rollup through a lookup (store to region), the group
is the member's answer, so that a store and its region arrive together in one Variable.

Which period a member is awaited by is the time dimension's business (the downstream key's period
of a day, month, session ...): membership compares the local date on which that period begins with
the member's dates, and never reads a key itself.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from itertools import count
from typing import Any

from airflow_partitions.grains.grain import Period
from airflow_partitions.grains.keys import MAX_KEY_LENGTH, is_key, shown, terminal
from airflow_partitions.grains.stored import ValueEquality, dump, load

log = logging.getLogger(__name__)

#: Seconds a process keeps a Variable's value before reading it again: a change is seen within a
#: minute, and a scheduler loop pays for one read (one small query) a minute, not one per call.
#: ``AIRFLOW_PARTITIONS_VARIABLE_TTL`` (seconds, in every Airflow process alike) sets another.
VARIABLE_TTL = float(os.environ.get("AIRFLOW_PARTITIONS_VARIABLE_TTL") or 60.0)
#: Seconds a process keeps a read that failed (a Variable missing or malformed) before reading it
#: again: a fix is seen within seconds, so that keys sent right after it are not refused for a
#: minute more. Still logged once per :data:`VARIABLE_TTL`.
BROKEN_TTL = min(5.0, VARIABLE_TTL)

#: What a Variable holding members must contain, for error messages.
EXPECTED_JSON = (
    'a JSON list of members, each a string such as "store-042" or an object such as '
    '{"value": "store-009", "start": "2026-04-06", "end": "2027-01-01", "group": "vic"} '
    "(start, end and group optional; dates YYYY-MM-DD, end exclusive)"
)


def _date(value: Any, *, what: str) -> date | None:
    """Return *value* (``None``, a ``date`` or an ISO ``YYYY-MM-DD`` string) as a date."""
    if value is None:
        return None
    if isinstance(value, datetime):
        raise ValueError(f"{what} must be a date such as '2026-04-06', not a date and time; got {value!r}.")
    if isinstance(value, date):
        return value
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        try:
            return date.fromisoformat(value)
        except ValueError:
            pass
    raise ValueError(f"{what} must be a date such as '2026-04-06' (YYYY-MM-DD); got {value!r}.")


#: The fields of a member's object form, in a stored list or a Variable.
_ENTRY_FIELDS = {"value", "start", "end", "group"}


@dataclass(frozen=True, order=True)
class Member:
    """
    One member of a dimension, awaited from ``start`` (inclusive) to ``end`` (exclusive).

    ``Member("store-009", start="2026-04-06")`` is awaited by the periods of the time dimension that
    begin on 2026-04-06 or later (the day 2026-04-06, the month 2026-05, not the month 2026-04,
    which began before it), and by no earlier one; its key ``store-009|2026-04-04`` is refused
    (:class:`~airflow_partitions.OutsideCalendar`, naming its dates). A period's beginning is the
    local date, in the time dimension's time zone, of its first instant. Without dates a member is
    awaited by every period, as a plain value in the list is.

    ``group`` is the member's answer under a rollup through a lookup: with the window
    ``DimensionWindow(store=[Member("store-009", group="vic")])`` and the dimension's mapper a
    ``LookupMapper`` of stores to regions, store-009 counts for ``vic`` whatever the table says.

    :param value: The member as it is spelled in keys (``"store-009"``): a non-blank string of at
        most 250 characters.
    :param start: The first date it is awaited (a ``date`` or ``"YYYY-MM-DD"``); ``None``: always.
    :param end: The first date it is no longer awaited; ``None``: never ends.
    :param group: The downstream value it counts for under a lookup (``"vic"``); ``None``: the
        lookup's answer.
    :raises ValueError: naming the argument, for a blank or over-250-character value or group, a
        date that is not a ``date`` or ``YYYY-MM-DD`` (a ``datetime`` too), or an end not after the
        start.
    """

    value: str
    start: date | None = None
    end: date | None = None
    group: str | None = None

    def __post_init__(self) -> None:
        owner = f"Member({self.value!r})" if isinstance(self.value, str) else "Member"
        if not is_key(self.value):
            raise ValueError(
                f"Member: value must be a non-blank partition key segment of at most {MAX_KEY_LENGTH} "
                f"characters such as 'store-042'; got {shown(self.value)}."
            )
        object.__setattr__(self, "start", _date(self.start, what=f"{owner}: start"))
        object.__setattr__(self, "end", _date(self.end, what=f"{owner}: end"))
        if self.start is not None and self.end is not None and self.end <= self.start:
            raise ValueError(f"{owner}: end {self.end} must be after start {self.start} (end is exclusive).")
        if self.group is not None and not is_key(self.group):
            raise ValueError(
                f"{owner}: group must be a non-blank key of at most {MAX_KEY_LENGTH} characters such as "
                f"'vic'; got {shown(self.group)}."
            )

    @property
    def dated(self) -> bool:
        """Whether the member has a start or an end."""
        return self.start is not None or self.end is not None

    def covers(self, day: date) -> bool:
        """Whether a period beginning on the local date *day* awaits this member."""
        return (self.start is None or self.start <= day) and (self.end is None or day < self.end)

    def dates(self) -> str:
        """Return the member's dates in words: ``from 2026-04-06``, ``from … until … (exclusive)``."""
        if not self.dated:
            return "always"
        since = f"from {self.start}" if self.start else ""
        until = f"until {self.end} (exclusive)" if self.end else ""
        return " ".join(part for part in (since, until) if part)

    def fields(self) -> dict[str, str]:
        """Return the member as an object, keys sorted: ``{"end"?, "group"?, "start"?, "value"}``."""
        fields = {"value": self.value, "start": self.start, "end": self.end, "group": self.group}
        return {k: str(v) for k, v in sorted(fields.items()) if v is not None}

    def entry(self) -> str | dict[str, str]:
        """Return the member as an entry of a stored list or a Variable: the value, or :meth:`fields`."""
        return self.value if not self.dated and self.group is None else self.fields()

    @classmethod
    def from_entry(cls, entry: Any, *, where: str) -> Member:
        """
        Return the member an entry (a string, or an object with ``value`` and optional fields) names.

        :raises ValueError: naming *where*, for an entry of another shape or with unknown fields.
        """
        if isinstance(entry, str):
            return cls(entry)
        if isinstance(entry, Mapping) and "value" in entry and set(entry) <= _ENTRY_FIELDS:
            return cls(entry["value"], entry.get("start"), entry.get("end"), entry.get("group"))
        raise ValueError(
            f"{where}: entry {entry!r} must be a string such as 'store-042' or an object with 'value' and "
            "optionally 'start', 'end', 'group'."
        )

    def serialize(self) -> dict[str, Any]:
        """Return ``{"value", "start"?, "end"?, "group"?, "format_version"}`` (dates as YYYY-MM-DD)."""
        return dump(
            value=self.value,
            start=None if self.start is None else str(self.start),
            end=None if self.end is None else str(self.end),
            group=self.group,
        )

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> Member:
        """Rebuild the member from :meth:`serialize`'s output."""
        data = load(data, cls)
        return cls(data["value"], data.get("start"), data.get("end"), data.get("group"))


#: Distinct member lists read in this process, numbered: a rollup's memos are keyed by the number
#: of the lists it used, so a Variable's new value is never answered from an old one's memo.
_VERSIONS = count(1)


@dataclass(frozen=True, eq=False)
class MemberList:
    """
    The members of one dimension at one moment, and where they came from.

    ``source`` says where (``"listed in the Dag file"``, ``"Variable 'retail_stores'"``) and
    ``read_at`` when a Variable was read (UTC). ``version`` numbers the distinct lists a process has
    built; a rollup keys its memos by it.
    """

    members: tuple[Member, ...]
    source: str = "listed in the Dag file"
    read_at: datetime | None = None
    version: int = field(default_factory=lambda: next(_VERSIONS))
    by_value: dict[str, Member] = field(init=False, repr=False)
    dated: bool = field(init=False, repr=False)
    _groups: dict[Any, dict[str, tuple[Member, ...]]] = field(init=False, repr=False, default_factory=dict)

    def __post_init__(self) -> None:
        by_value = {member.value: member for member in self.members}
        if len(by_value) != len(self.members):
            twice = sorted(value for value, n in Counter(m.value for m in self.members).items() if n > 1)
            raise ValueError(f"{self.source}: lists a member twice: {twice!r}.")
        object.__setattr__(self, "members", tuple(sorted(self.members)))
        object.__setattr__(self, "by_value", by_value)
        object.__setattr__(self, "dated", any(member.dated for member in self.members))

    @property
    def values(self) -> tuple[str, ...]:
        """The members' values, sorted."""
        return tuple(member.value for member in self.members)

    def grouped(self, mapper: Any) -> dict[str, tuple[Member, ...]]:
        """
        Return the members by the downstream value each counts for: its group, else *mapper*'s answer.

        Worked out once per list and mapper. A member the mapper maps to several values (a
        one-to-many lookup) is in each of their groups; with no *mapper*, either every member has a
        group or none has (each then counts for its own value, the dimension kept as it is).

        :raises ValueError: naming the member, if it has no group and *mapper* refuses its value;
            with no *mapper*, naming the members without a group when others have one (an entry
            saved without its group would otherwise open a partition of its own, ``s002|…``, and
            leave its group's periods no longer awaiting it).
        """
        index = self._groups.get(mapper)
        if index is None:
            from airflow_partitions.mapping import downstream_keys

            lone = [m.value for m in self.members if not m.group] if mapper is None else []
            if lone and len(lone) < len(self.members):
                raise ValueError(
                    f"{self.source}: members {lone[:5]!r}{' …' if len(lone) > 5 else ''} have no group "
                    "while the others have one; give each member its group (such as "
                    f"{json.dumps({'value': lone[0], 'group': 'north'})})."
                )
            groups: dict[str, list[Member]] = {}
            for member in self.members:
                try:
                    if member.group or mapper is None:
                        answers = [member.group or member.value]
                    else:
                        answers = downstream_keys(mapper, member.value)
                except ValueError as err:
                    raise ValueError(
                        f"{self.source}: member {member.value!r} has no group and the dimension's mapper "
                        f"refuses it ({err}); give it a group or add it to the lookup."
                    ) from None
                for answer in answers:
                    groups.setdefault(answer, []).append(member)
            index = self._groups[mapper] = {name: tuple(members) for name, members in groups.items()}
        return index

    def awaited(self, day: date | None, candidates: Iterable[Member] | None = None) -> list[str]:
        """
        Return the values of the members (of *candidates*, default all) a period beginning on *day* awaits.

        :raises ValueError: if a member has dates and *day* is ``None`` (no time dimension).
        """
        members = self.members if candidates is None else candidates
        if day is None:
            if dated := [m.value for m in members if m.dated]:
                raise ValueError(
                    f"{self.source}: members {dated[:3]!r} have dates, but the downstream key has no one "
                    "time dimension whose periods could begin on them."
                )
            return [member.value for member in members]
        return [member.value for member in members if member.covers(day)]


def period_day(decoded: Mapping[str, Any]) -> date | None:
    """
    Return the local date on which the one period among *decoded*'s values begins, else ``None``.

    ``{"store": "vic", "day": Period(2026-04-06)}`` gives 2026-04-06 (the period's first instant,
    in its grain's time zone); a core mapper's decoded ``datetime`` gives its own date. ``None`` if
    no value, or more than one, is a period.
    """
    days = [
        value.start.date() if isinstance(value, Period) else value.date()
        for value in decoded.values()
        if isinstance(value, Period | datetime)
    ]
    return days[0] if len(days) == 1 else None


def listed(values: Iterable[Any], *, owner: str) -> MemberList:
    """
    Return a list written in a Dag file (strings and :class:`Member` objects) as a :class:`MemberList`.

    :raises ValueError: naming *owner*, for an empty list, an entry that is neither a string nor a
        :class:`Member`, or a value listed twice.
    """
    values = list(values)
    if not values or not all(isinstance(v, str | Member) for v in values):
        raise ValueError(
            f"{owner} must be a non-empty list of distinct values such as ['eu', 'us'] or Member(...) "
            f"objects; got {values!r}."
        )
    try:
        members = tuple(v if isinstance(v, Member) else Member(v) for v in values)
    except ValueError as err:
        raise ValueError(f"{owner}: {err}") from None
    if len({member.value for member in members}) != len(members):
        raise ValueError(f"{owner} lists a value twice: {values!r}.")
    return MemberList(members)


# -- Members read from an Airflow Variable ----------------------------------------------------------


@dataclass
class _Read:
    """
    What this process last read of one Variable: its text, its members or what is wrong, and when.

    ``error`` is a message, never an exception object: raising one stored object again on every
    call grows its traceback each time (the scheduler logged 3,000-line tracebacks). ``since`` is
    when this process first read the Variable broken, of the reads that have all failed since.
    """

    text: str | None
    members: MemberList | None
    error: str | None
    checked: float  # time.monotonic() of the last read
    since: datetime | None = None
    logged: float | None = None  # time.monotonic() when its error was last logged


_READS: dict[str, _Read] = {}
_READING = threading.Lock()


@dataclass(frozen=True)
class Unavailable:
    """
    Why the members of a rollup cannot be known now: a broken Variable, or a list mixing groups.

    What :meth:`~airflow_partitions.composite.DimensionRollupMapper.members_read` returns in place
    of the member lists' versions; hashable, so the rollup's memos are keyed by it too.
    """

    reason: str


def read_variable(name: str) -> str | None:
    """
    Return the text of the Airflow Variable *name*, or ``None`` if no secrets backend has it.

    In a task (the task SDK's supervisor is present), through ``airflow.sdk.Variable``. In the
    scheduler, the api-server and the command line, through Airflow's secrets backends in their
    configured order (environment variables ``AIRFLOW_VAR_<NAME>``, any configured backend, then the
    metadata database), the database read on a connection of its own (:func:`_reading_engine`):
    ``airflow.models.Variable.get`` would use the thread's scoped session, which in the scheduler is
    the loop's own, and commit and close it under the loop.
    """
    if hasattr(sys.modules.get("airflow.sdk.execution_time.task_runner"), "SUPERVISOR_COMMS"):
        from airflow.sdk import Variable

        value = Variable.get(name, default=None)
        return None if value is None else str(value)
    from airflow.configuration import ensure_secrets_loaded
    from airflow.secrets.metastore import MetastoreBackend
    from sqlalchemy.orm import Session

    for backend in ensure_secrets_loaded():
        if isinstance(backend, MetastoreBackend):
            with Session(bind=_reading_engine()) as session:
                found = backend.get_variable(name, session=session)
        else:
            found = backend.get_variable(name)
        if found is not None:
            return found
    return None


def _reading_engine() -> Any:
    """
    Return this process's engine for reading Variables: Airflow's database, without a pool.

    Never a connection of Airflow's pool: a thread holding one for its request and waiting for
    another (the pool empty, its connections held by requests waiting on this thread's
    transaction) would wait for the pool's timeout. A connection of its own, opened per read
    (once a minute per Variable).
    """
    global _ENGINE
    if _ENGINE is None:
        from airflow import settings
        from sqlalchemy import create_engine
        from sqlalchemy.pool import NullPool

        if settings.engine is None:
            raise RuntimeError("Airflow's metadata database is not configured in this process.")
        _ENGINE = create_engine(settings.engine.url, poolclass=NullPool)
    return _ENGINE


_ENGINE: Any = None


def parse_members(name: str, text: str | None, read_at: datetime) -> MemberList:
    """
    Return the members a Variable's *text* lists.

    :raises ValueError: naming the Variable and the JSON expected (:data:`EXPECTED_JSON`), if it is
        missing (*text* ``None``), not JSON, not a non-empty list, or has a bad entry (named).
    """
    where = f"Airflow Variable {name!r}"
    if text is None:
        raise ValueError(f"{where} does not exist; set it to {EXPECTED_JSON}.")
    try:
        entries = json.loads(text)
    except ValueError as err:
        raise ValueError(f"{where} is not JSON ({err}); expected {EXPECTED_JSON}.") from None
    if not isinstance(entries, list) or not entries:
        raise ValueError(f"{where} holds {shown(text[:80])}; expected {EXPECTED_JSON}.")
    try:
        members = tuple(Member.from_entry(entry, where=where) for entry in entries)
        return MemberList(members, source=f"Variable {name!r}", read_at=read_at)
    except ValueError as err:
        message = str(err) if str(err).startswith(where) else f"{where}: {err}"
        raise ValueError(f"{message.rstrip('.')}; expected {EXPECTED_JSON}.") from None


class VariableMembers(ValueEquality):
    """
    The members listed in an Airflow Variable, read at run time: a list that changes without a redeploy.

    ``DimensionWindow(store=VariableMembers("retail_stores"))`` waits for the stores the Variable
    ``retail_stores`` lists, as JSON: ``["store-001", {"value": "store-009", "start": "2026-04-06",
    "group": "vic"}]`` (see :class:`Member` for the fields). Set it through Airflow's UI, ``airflow
    variables set``, the REST API or a secrets backend.

    The stored form names the Variable only, so changing its value never changes the rollup's
    fingerprint: pending runs are kept, and await the members their periods cover from then on.
    Each process (scheduler, api-server, task, command line) reads the value at most once per
    :data:`VARIABLE_TTL` seconds (60) and keeps what it read: a change is seen within a minute, and a
    scheduler loop waits on one small query a minute. A Variable that is missing or malformed raises
    ``ValueError`` naming it and the JSON expected wherever its members are needed (the scheduler
    logs it on each loop; ``airflow-partitions check`` reports it); a read that fails (a database
    error) keeps the last value read, if any, and is tried again next time.

    :param name: The Variable's key (``"retail_stores"``).
    :raises ValueError: at Dag parse, for a name that is not a non-empty string of at most 250
        characters (Airflow's ``variable.key`` column).
    """

    def __init__(self, name: str) -> None:
        if not is_key(name) or name != name.strip():
            raise ValueError(
                f"VariableMembers: name must be an Airflow Variable key such as 'retail_stores' (at most "
                f"{MAX_KEY_LENGTH} characters, no spaces around it); got {shown(name)}."
            )
        self.name = name

    def __repr__(self) -> str:
        return f"VariableMembers({self.name!r})"

    def current(self) -> MemberList:
        """
        Return the members the Variable lists, as read at most :data:`VARIABLE_TTL` seconds ago.

        :raises ValueError: naming the Variable and the JSON expected, if it is missing or malformed.
        """
        read = self._last()
        if read.members is None:
            raise ValueError(read.error or f"Airflow Variable {self.name!r} could not be read.")
        return read.members

    def problem(self) -> tuple[str, datetime] | None:
        """
        Return what is wrong with the Variable as last read, and since when (UTC), or ``None``.

        ``("Airflow Variable 'retail_stores' is not JSON (…); expected …", 2026-12-07T10:02:03Z)``:
        the message :meth:`current` raises, and when this process first read the Variable broken
        (of the reads that have all failed since). Read as :meth:`current` reads, at most once per
        :data:`VARIABLE_TTL` seconds.
        """
        read = self._last()
        if read.members is not None or read.since is None:
            return None
        return read.error or f"Airflow Variable {self.name!r} could not be read.", read.since

    def read_digest(self) -> str:
        """
        Return what the answers of rollups over this Variable depend on, as last read: its text.

        The text itself (or the error read), so that answers kept across processes are keyed by
        the value the members came from (:mod:`airflow_partitions.tools.state.kept.answers`).
        """
        read = self._last()
        return read.text if read.members is not None and read.text is not None else f"error: {read.error}"

    def read_now(self) -> None:
        """Read the Variable again now, whatever the age of the last read (the api-server's watch)."""
        self._keep(self._read(_READS.get(self.name), time.monotonic()))

    def _last(self) -> _Read:
        """
        Return this process's read of the Variable, reading it again if older than the TTL.

        The read itself holds no lock: a thread that would wait on another's database read while
        holding Airflow's transaction (an api-server mapping a new event's key) could close a
        circle with threads waiting on that transaction. Two threads may both read; the newer read
        is kept.
        """
        read = _READS.get(self.name)
        now = time.monotonic()
        if read is None or now - read.checked >= (VARIABLE_TTL if read.members is not None else BROKEN_TTL):
            read = self._keep(self._read(read, now))
        return read

    def _keep(self, read: _Read) -> _Read:
        """Keep *read* unless a newer one was kept meanwhile; return the one kept."""
        with _READING:
            kept = _READS.get(self.name)
            if kept is None or kept.checked <= read.checked:
                kept = _READS[self.name] = read
        return kept

    def _read(self, last: _Read | None, now: float) -> _Read:
        """
        Read the Variable again after *last*; log one line if it is broken (one per read, not per use).

        The scheduler asks for the members of every pending run on every loop: a broken Variable
        is logged here, once per :data:`VARIABLE_TTL` seconds, and its pending runs wait without a
        log line each (:class:`~airflow_partitions.rollup.CountingPolicy`).
        """
        try:
            text = read_variable(self.name)
        except Exception as err:  # the database or a secrets backend failed: keep what was read
            log.warning(
                "Reading Airflow Variable %r failed (%s); keeping the last value read.",
                self.name,
                terminal(str(err), lines=False),
            )
            if last is not None and last.members is not None:
                return _Read(last.text, last.members, None, now)
            return self._broken(last, None, f"Airflow Variable {self.name!r} could not be read: {err}", now)
        if last is not None and last.members is not None and text == last.text:
            return _Read(text, last.members, None, now)  # unchanged: the same list, memos still good
        try:
            return _Read(text, parse_members(self.name, text, datetime.now(UTC)), None, now)
        except ValueError as err:
            return self._broken(last, text, str(err), now)

    def _broken(self, last: _Read | None, text: str | None, error: str, now: float) -> _Read:
        """
        Return a failed read of *error*, broken since *last*'s start if it had failed too.

        Logged once per :data:`VARIABLE_TTL` seconds while the error stays the same, however often
        it is read.
        """
        failing = last if last is not None and last.since is not None else None
        since = failing.since if failing is not None and failing.since is not None else datetime.now(UTC)
        logged = failing.logged if failing is not None and failing.error == error else None
        if logged is None or now - logged >= VARIABLE_TTL:
            log.error(
                "%s Keys for rollups over it are refused and their pending runs wait until it is fixed "
                "(broken since %s).",
                terminal(error, lines=False),
                since.isoformat(timespec="seconds"),
            )
            logged = now
        return _Read(text, None, error, now, since, logged)

    def serialize(self) -> dict[str, Any]:
        """Return ``{"variable": name, "format_version"}``: the name only, never the value."""
        return dump(variable=self.name)

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> VariableMembers:
        """Rebuild from :meth:`serialize`'s output."""
        return cls(load(data, cls)["variable"])


def members_of(listing: MemberList | VariableMembers) -> MemberList:
    """Return a listed dimension's members now: the list, or the Variable's value as last read."""
    return listing.current() if isinstance(listing, VariableMembers) else listing


def broken_since(name: str) -> datetime | None:
    """
    Return when this process first read the Variable *name* broken (UTC), if its last read failed.

    Looks at this process's reads only: reads nothing (``None`` if not read, or read fine).
    """
    read = _READS.get(name)
    return None if read is None or read.members is not None else read.since


def forget_reads() -> None:
    """Forget every Variable read in this process: the next use reads again (for tests and tools)."""
    with _READING:
        _READS.clear()
