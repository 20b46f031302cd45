"""
Key-shape mappers: partition keys read and rewritten by their shape, not by their time.

:class:`RegexMapper` pulls named parts out of a key with a regular expression and writes them
into a template. Patterns run on RE2 (the ``google-re2`` package), whose matching time is
linear in the key's length, so no key can stall the scheduler loop the way a backtracking
pattern can (``(a+)+$`` against ``"a" * 10_000 + "b"``).
"""

from __future__ import annotations

import string
from typing import Any

import re2
from airflow.partition_mappers.base import PartitionMapper

from airflow_partitions._common import dump, load, require_text
from airflow_partitions.namespace import MAX_KEY_LENGTH


class RegexMapper(PartitionMapper):
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
            self._regex = re2.compile(pattern)
        except re2.error as err:
            raise ValueError(
                f"{owner}: pattern {pattern!r} is not a regular expression RE2 accepts: {err}."
            ) from err
        groups = set(self._regex.groupindex)
        for _, field, spec, conversion in string.Formatter().parse(template):
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
                f"RegexMapper: partition key {key!r} does not match the pattern {self.pattern!r}."
            )
        parts = match.groupdict()
        missing = sorted(
            name for name, value in parts.items() if value is None and "{" + name + "}" in self.template
        )
        if missing:
            raise ValueError(
                f"RegexMapper: partition key {key!r} matched {self.pattern!r} without the groups {missing}."
            )
        result = self.template.format(**parts)
        if not result.strip() or len(result) > MAX_KEY_LENGTH:
            raise ValueError(
                f"RegexMapper: partition key {key!r} maps to {result[:60]!r} ({len(result)} characters); "
                f"expected a non-blank key of at most {MAX_KEY_LENGTH}."
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
