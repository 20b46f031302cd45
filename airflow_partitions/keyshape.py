"""
Key-shape mappers: partition keys read and rewritten by their shape, not by their time.

:class:`RegexMapper` pulls named parts out of a key with a regular expression and writes them
into a template. Patterns run on RE2 (the ``google-re2`` package), whose matching time is
linear in the key's length, so no key can stall the scheduler loop the way a backtracking
pattern can (``(a+)+$`` against ``"a" * 10_000 + "b"``).

:class:`LookupMapper` maps keys through a static table: many-to-one (store → region) or
one-to-many (region → stores, a fan-out).
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from typing import Any

import re2
from airflow.partition_mappers.base import PartitionMapper

from airflow_partitions.grains.keys import MAX_KEY_LENGTH, is_key, shown
from airflow_partitions.grains.stored import ValueEquality, dump, load
from airflow_partitions.mapping import check_fan_out, require_text

#: RE2 options that keep a pattern's compile error out of stderr (we raise it as a ValueError).
_QUIET = re2.Options()
_QUIET.log_errors = False


class RegexMapper(ValueEquality, PartitionMapper):
    r"""
    Extract named groups from an upstream key and render them into a template.

    ``RegexMapper(r"exports/(?P<region>[a-z]+)/(?P<day>\d{8})\.csv", "{region}|{day}")`` maps
    ``exports/eu/20260310.csv`` to ``eu|20260310``. The whole key must match (``fullmatch``);
    the template is a Python format string whose fields are the pattern's group names.

    Syntax: RE2's (https://github.com/google/re2/wiki/Syntax), close to Python's ``re`` without
    backreferences and look-around, and with ASCII-only ``\d``, ``\w``, ``\s`` (``\d`` is
    ``[0-9]``); matching is linear-time in the key's length.

    :param pattern: The regular expression, with named groups ``(?P<name>...)``.
    :param template: The output, e.g. ``"{region}|{day}"``: fields name groups of *pattern*.
    :param max_downstream_keys: Passed through to Airflow's fan-out cap, as core mappers do.
    :raises ValueError: at Dag parse, naming the pattern, if RE2 cannot compile it, and naming
        the template if it uses a field that is not a named group of the pattern, a positional
        field (``{}``, ``{0}``) or format specs. At mapping time, naming the key and the
        pattern, if the key does not match, a group the template uses did not take part in the
        match, or the output is empty or longer than Airflow's 250-character keys.
    """

    def __init__(self, pattern: str, template: str, *, max_downstream_keys: int | None = None) -> None:
        super().__init__(max_downstream_keys=max_downstream_keys)
        owner = "RegexMapper"
        self.pattern = require_text(pattern, owner=owner, name="pattern", example=r"(?P<region>[a-z]+)/.*")
        self.template = require_text(template, owner=owner, name="template", example="{region}")
        try:
            self._regex = re2.compile(pattern, _QUIET)
        except re2.error as err:
            reason = err.args[0].decode() if err.args and isinstance(err.args[0], bytes) else err
            raise ValueError(
                f"{owner}: pattern {pattern!r} is not a regular expression RE2 accepts: {reason}."
            ) from err
        groups = set(self._regex.groupindex)
        if not template.strip():
            raise ValueError(f"{owner}: template must not be blank; got {template!r}.")
        try:
            fields = list(string.Formatter().parse(template))
        except ValueError as err:
            raise ValueError(f"{owner}: template {template!r} is not a format string: {err}.") from None
        for _, field, spec, conversion in fields:
            if field is None:
                continue
            if field not in groups or spec or conversion:
                raise ValueError(
                    f"{owner}: template {template!r} uses {{{field}{'!' + conversion if conversion else ''}"
                    f"{':' + spec if spec else ''}}}; expected plain fields naming groups of the pattern: "
                    f"{sorted(groups) or 'none (add (?P<name>...) groups)'}."
                )

    def to_downstream(self, key: str) -> str:
        """Return the template filled with the named groups of *key*'s full match."""
        match = self._regex.fullmatch(key) if isinstance(key, str) else None
        if match is None:
            raise ValueError(
                f"RegexMapper: partition key {shown(key)} does not match the pattern {self.pattern!r}."
            )
        parts = match.groupdict()
        missing = sorted(
            name for name, value in parts.items() if value is None and "{" + name + "}" in self.template
        )
        if missing:
            raise ValueError(
                f"RegexMapper: partition key {shown(key)} matched {self.pattern!r} "
                f"without the groups {missing}."
            )
        result = self.template.format(**parts)
        if not is_key(result):
            raise ValueError(
                f"RegexMapper: partition key {shown(key)} maps to {result[:60]!r} "
                f"({len(result)} characters); expected a non-blank key of at most {MAX_KEY_LENGTH}."
            )
        return result

    def serialize(self) -> dict[str, Any]:
        """Return ``{"format_version", "pattern", "template"[, "max_downstream_keys"]}``."""
        return dump(
            pattern=self.pattern, template=self.template, max_downstream_keys=self.max_downstream_keys
        )

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> RegexMapper:
        """Rebuild the mapper from :meth:`serialize`'s output."""
        data = load(data, cls)
        return cls(data["pattern"], data["template"], max_downstream_keys=data.get("max_downstream_keys"))


def _table_key(value: Any, *, owner: str, what: str) -> str:
    """Return *value* if it is a usable partition key (non-blank ``str``, at most 250 characters)."""
    if not is_key(value):
        raise ValueError(
            f"{owner}: {what} must be a non-blank partition key of at most {MAX_KEY_LENGTH} characters "
            f"such as 'eu'; got {value!r}."
        )
    return value


class LookupMapper(ValueEquality, PartitionMapper):
    """
    Map partition keys through a static table: many-to-one, one-to-many, or both.

    Many-to-one (store → region): ``LookupMapper({"store-001": "eu", "store-002": "eu",
    "store-101": "us"})`` maps ``store-002`` to ``eu``. One-to-many (region → stores, a
    fan-out: one Dag run per store): ``LookupMapper({"eu": ["store-001", "store-002"]})`` maps
    ``eu`` to ``store-001`` and ``store-002``. A table may mix both kinds of entry.

    A key missing from the table raises ``ValueError`` (strict, the default), maps to *default*
    (``default="unassigned"``), or maps to itself (``pass_through=True``). Keys are matched
    exactly (case and spaces count).

    Serialized with the table sorted by key and each list of targets sorted, so equal tables
    serialize identically whatever order the Dag file wrote them in; targets are downstream
    keys, their order carries no meaning.

    :param table: Upstream key → downstream key, or → a non-empty list of downstream keys.
    :param default: The downstream key for keys missing from *table*.
    :param pass_through: Map keys missing from *table* to themselves.
    :param max_downstream_keys: Airflow's fan-out cap for this mapper (default: the
        ``[scheduler] partition_mapper_max_downstream_keys`` setting, 1000).
    :raises ValueError: at Dag parse, naming the entry, for an empty table, a key or target that
        is not a non-blank string of at most 250 characters, an empty or repeating target list,
        both *default* and *pass_through*, or a list longer than the fan-out cap; at mapping
        time, naming the key and a few known keys, for a key missing from a strict table, and naming
        the key, for a blank or over-250-character key that would pass through.
    """

    def __init__(
        self,
        table: Mapping[str, str | list[str] | tuple[str, ...]],
        *,
        default: str | None = None,
        pass_through: bool = False,
        max_downstream_keys: int | None = None,
    ) -> None:
        super().__init__(max_downstream_keys=max_downstream_keys)
        owner = "LookupMapper"
        if not isinstance(table, Mapping) or not table:
            raise ValueError(
                f"{owner}: table must be a non-empty mapping such as {{'store-001': 'eu'}}; got {table!r}."
            )
        if default is not None and pass_through:
            raise ValueError(f"{owner}: give default={default!r} or pass_through=True, not both.")
        self.default = None if default is None else _table_key(default, owner=owner, what="default")
        if not isinstance(pass_through, bool):
            raise ValueError(f"{owner}: pass_through must be True or False; got {pass_through!r}.")
        self.pass_through = pass_through
        self.table: dict[str, str | tuple[str, ...]] = {}
        for key in sorted(table, key=str):
            _table_key(key, owner=owner, what="every table key")
            target = table[key]
            if isinstance(target, str):
                self.table[key] = _table_key(target, owner=owner, what=f"table[{key!r}]")
                continue
            if not isinstance(target, list | tuple) or not target:
                raise ValueError(
                    f"{owner}: table[{key!r}] must be a key or a non-empty list of keys; got {target!r}."
                )
            targets = tuple(
                sorted(_table_key(t, owner=owner, what=f"each of table[{key!r}]") for t in target)
            )
            if len(set(targets)) != len(targets):
                raise ValueError(f"{owner}: table[{key!r}] lists a key twice: {list(target)!r}.")
            self.table[key] = targets
        self.largest_fan_out, widest = max(
            ((len(t) if isinstance(t, tuple) else 1, k) for k, t in self.table.items()), key=lambda p: p[0]
        )
        check_fan_out(owner, self.largest_fan_out, f"key {widest!r}", max_downstream_keys)

    def to_downstream(self, key: str) -> str | list[str]:
        """Return the key or keys *key* maps to (a list for one-to-many entries)."""
        target = self.table.get(key) if isinstance(key, str) else None
        if target is None:
            if self.default is not None:
                return self.default
            if self.pass_through and isinstance(key, str):
                if is_key(key):
                    return key
                raise ValueError(
                    f"LookupMapper: partition key {shown(key)} ({len(key)} characters) is not in the lookup "
                    f"table and cannot pass through: expected a non-blank key of at most {MAX_KEY_LENGTH}."
                )
            known = ", ".join(repr(k) for k in list(self.table)[:5])
            more = f" and {len(self.table) - 5} more" if len(self.table) > 5 else ""
            raise ValueError(
                f"LookupMapper: partition key {shown(key)} is not in the lookup table; expected one of "
                f"{known}{more}."
            )
        return list(target) if isinstance(target, tuple) else target

    def serialize(self) -> dict[str, Any]:
        """Return ``{"table": {sorted keys: key or sorted list}, "default"?, "pass_through"?}``."""
        return dump(
            table={k: list(t) if isinstance(t, tuple) else t for k, t in self.table.items()},
            default=self.default,
            pass_through=self.pass_through or None,
            max_downstream_keys=self.max_downstream_keys,
        )

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> LookupMapper:
        """Rebuild the mapper from :meth:`serialize`'s output."""
        data = load(data, cls)
        return cls(
            data["table"],
            default=data.get("default"),
            pass_through=data.get("pass_through", False),
            max_downstream_keys=data.get("max_downstream_keys"),
        )
