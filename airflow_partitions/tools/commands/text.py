"""Text for a 120-column terminal, shared by the commands' formatters: wrapped lines, lists, counts."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

#: The terminal's width the text output is laid out for.
WIDTH = 120
#: Keys listed in full in text output (a local day's 23 to 25 hours); a longer list shows its first and
#: last :data:`LISTED_ENDS` keys and how many it leaves out between them.
LISTED_KEYS = 25
LISTED_ENDS = 6


def wrap(label: str, text: str) -> str:
    """Return *text* after *label* (``"  fires at        …"``), wrapped at spaces: never a key cut."""
    return textwrap.fill(
        text,
        WIDTH,
        initial_indent=f"  {label:<16}",
        subsequent_indent=" " * 18,
        break_long_words=False,
        break_on_hyphens=False,
    )


def listed(keys: Sequence[str]) -> str:
    """
    Return *keys* comma-separated, or for more than :data:`LISTED_KEYS` the first and last six and a count.

    96 keys: ``"k1, …, k6, … (84 more; --json lists all) …, k91, …, k96"``.
    """
    if len(keys) <= LISTED_KEYS:
        return ", ".join(keys)
    more = f"… ({len(keys) - 2 * LISTED_ENDS} more; --json lists all) …"
    return ", ".join([*keys[:LISTED_ENDS], more, *keys[-LISTED_ENDS:]])


def count(n: int, noun: str) -> str:
    """Return ``"1 partition"``, ``"2 partitions"``: *n* and *noun*, in the plural unless *n* is 1."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
