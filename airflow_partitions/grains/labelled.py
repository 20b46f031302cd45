"""
The shared base of grains whose keys are labelled calendar keys: ``FY2026``, ``FY2026-Q3``, ``R2026-W05``.

The public grains built on it live in :mod:`~airflow_partitions.grains.fiscal` and
:mod:`~airflow_partitions.grains.retail`. A labelled key is a *prefix* (letters), a four-digit year and
optionally a unit letter with its number: ``Q`` and one digit, ``M`` or ``W`` and two digits.
:func:`~airflow_partitions.grains.keys.read_key` splits such a key and hands it to the grain of its
calendar (``Grain.labelled_start``), because only that grain knows which instants it names.
"""

from __future__ import annotations

from abc import abstractmethod
from datetime import datetime
from typing import ClassVar

from airflow_partitions.grains.grain import WallClockGrain
from airflow_partitions.grains.keys import CALENDAR_KEY, shown


def check_prefix(owner: str, prefix: object) -> None:
    """Refuse a key prefix that is not one or more ASCII letters, naming *owner* and the prefix."""
    if not isinstance(prefix, str) or CALENDAR_KEY.fullmatch(f"{prefix}2026") is None:
        raise ValueError(
            f"{owner}: prefix must be one or more ASCII letters such as 'FY' or 'R'; got {prefix!r}."
        )


class LabelledGrain(WallClockGrain):
    """
    A grain cut at local wall-clock times whose keys are ``{prefix}{year}[-{unit}{number}]``.

    Subclasses are dataclasses with a ``prefix`` field; they say which units their calendar's keys
    have (:attr:`units`) and where each period of the calendar starts (:meth:`_unit_start`).
    """

    prefix: str
    #: The unit letters of the calendar's keys besides the year: ``"Q"``, or ``"QMW"`` for retail.
    units: ClassVar[str]

    def _check_prefix(self) -> None:
        """Refuse a prefix that is not one or more ASCII letters, naming the grain and the prefix."""
        check_prefix(type(self).__name__, self.prefix)

    def _label(self, year: int, unit: str = "", number: int = 0) -> str:
        """
        Return the key ``FY2026`` (no *unit*), ``FY2026-Q3``, ``R2026-M01`` or ``R2026-W53``.

        :raises ValueError: for a year the four digits of a key cannot write (a fiscal year named
            by its end year 10000 holds 31 December 9999).
        """
        if not 1 <= year <= 9999:
            raise ValueError(f"{self!r}: year {year} cannot be written in a key's four digits.")
        if not unit:
            return f"{self.prefix}{year:04d}"
        return f"{self.prefix}{year:04d}-{unit}{number:0{1 if unit == 'Q' else 2}d}"

    @abstractmethod
    def _unit_start(self, year: int, unit: str, number: int) -> datetime | None:
        """
        Return the naive local start of period *number* of *unit* in calendar year *year*.

        *unit* is ``""`` for the year itself (*number* is then 0). Returns ``None`` if the calendar
        has no such period (``Q5``, ``W53`` in a 52-week year, a unit it does not have).
        """

    def labelled_start(self, key: str, label: str, year: int, unit: str) -> datetime:
        try:
            start = self._unit_start(year, unit[:1], int(unit[1:] or 0)) if label == self.prefix else None
        except (ValueError, OverflowError):  # a period outside datetime's years 1 to 9999
            start = None
        if start is None:
            examples = ", ".join(repr(self._label(2026, u, 1)) for u in ("", *self.units))
            raise ValueError(
                f"partition key {shown(key)} names no period of {self!r}'s calendar; expected a key such as "
                f"{examples}, or an ISO 8601 date or time."
            )
        return start
