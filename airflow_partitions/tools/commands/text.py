r"""
Text for a 120-column terminal, shared by the commands' formatters: wrapped lines, lists, counts.

Every text a command prints goes through :func:`~airflow_partitions.grains.keys.terminal` (its
answer, a backfill's lines, the findings of ``check``, the error messages; so do the log lines the
package writes): a key, an asset name or a message holding control characters (``ESC [2J``,
``ESC ]0;…BEL``) prints them escaped (``\x1b[2J``), never acted on; ``--json`` keeps them exact.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from airflow_partitions.grains.keys import terminal

#: The terminal's width the text output is laid out for.
WIDTH = 120
#: Keys listed in full in text output (a local day's 23 to 25 hours); a longer list shows its first and
#: last :data:`LISTED_ENDS` keys and how many it leaves out between them.
LISTED_KEYS = 25
LISTED_ENDS = 6


def wrap(label: str, text: str) -> str:
    """Return *text* after *label* (``"  fires at        …"``), wrapped at spaces: never a key cut."""
    return textwrap.fill(
        terminal(text, lines=False),
        WIDTH,
        initial_indent=f"  {label:<16}",
        subsequent_indent=" " * 18,
        break_long_words=False,
        break_on_hyphens=False,
    )


def listed(keys: Sequence[str]) -> str:
    """
    Return *keys* (each :func:`terminal`) comma-separated; over :data:`LISTED_KEYS`, the first and last six.

    96 keys: ``"k1, …, k6, … (84 more; --json lists all) …, k91, …, k96"``.
    """
    shown = [terminal(k, lines=False) for k in keys]
    if len(shown) <= LISTED_KEYS:
        return ", ".join(shown)
    more = f"… ({len(shown) - 2 * LISTED_ENDS} more; --json lists all) …"
    return ", ".join([*shown[:LISTED_ENDS], more, *shown[-LISTED_ENDS:]])


def count(n: int, noun: str) -> str:
    """Return ``"1 partition"``, ``"2 partitions"``: *n* and *noun*, in the plural unless *n* is 1."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
