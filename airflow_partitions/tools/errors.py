"""
The errors every face raises, defined once, and what each answers on every route and command line.

The tools (the readers, the writers, ``explain``) raise these; :data:`ANSWERS` is the one mapping
of an error to the HTTP status every route of the Partitions view answers
(:func:`~airflow_partitions.tools.ui.requests.answering`) and the exit code the command line
exits with (:mod:`~airflow_partitions.tools.cli`), the message the same on both:

- :class:`UnknownDag` (the deployment has no such Dag) and :class:`NotAConsumer` (it is not what
  the command needs: not partitioned, or reading no assets), both raised where a Dag is resolved
  (:func:`~airflow_partitions.tools.state.serialized.consumer_timetable`); :class:`UnknownAsset`;
  :class:`UnknownPartition`: 404, exit code 1;
- :class:`UsageError`: bad input, the message naming the option (``--start``) or parameter, the
  value and what was expected: 400, exit code 2; so is any other ``ValueError`` (a mapper's or
  Airflow's refusal, which names what it refuses);
- :class:`Forbidden`: the caller may not (Airflow's auth manager said no, or a write came from
  another site): 403, exit code 1;
- :class:`ApiError`: ``--api-url``'s api-server refused the token or did not answer: exit code 1
  (the command line's own; no route raises it).

Nothing here imports Airflow: the command line maps errors without it (``--api-url``).
"""

from __future__ import annotations

#: Exit codes: done (nothing found, or nothing held); found (what the command looks for: an error,
#: a held key; or the deployment answered no); a usage error.
OK, FOUND, USAGE = 0, 1, 2


class NotFound(LookupError):
    """What a request names is not in the deployment: 404, exit code 1."""


class UnknownDag(NotFound):
    """
    The Dag named is not in the deployment's metadata database (no serialized Dag).

    ``UnknownDag("no Dag 'nope' in this deployment's metadata database (is the dag-processor running?).")``
    """


class NotAConsumer(UnknownDag):
    """
    The Dag named is there, but not what the command needs: a kind of unknown Dag (404, exit code 1).

    Its schedule is not partitioned; or it reads no assets (``requeue``, ``explain``).
    """


class UnknownAsset(NotFound):
    """No active asset of that name, or the Dag named does not read it (``explain --asset``): 404, exit 1."""


class UnknownPartition(NotFound):
    """The Dag has no run or pending run of the partition key named (kept): 404, exit code 1."""


class UsageError(ValueError):
    """
    Input that is not usable, naming the option or parameter, the value and what was expected.

    ``UsageError("--state 'again' is not a state; states: failed, …")``: 400, exit code 2.
    """


class Forbidden(PermissionError):
    """The caller may not do this (too little access, or a write from another site): 403, exit code 1."""


class ApiError(Exception):
    """``--api-url``'s api-server refused the token or did not answer: exit code 1, the message says which."""


#: The one mapping: each error's HTTP status on every route and exit code on the command line. An
#: error is answered as the first of its classes (its ``__mro__``) listed; one listed nowhere is a
#: bug (500, a traceback). ``ApiError`` is the command line's own (no route raises it).
ANSWERS: dict[type[Exception], tuple[int | None, int]] = {
    NotFound: (404, FOUND),
    UsageError: (400, USAGE),
    ValueError: (400, USAGE),
    Forbidden: (403, FOUND),
    ApiError: (None, FOUND),
}


def answer_of(error: BaseException) -> tuple[int | None, int] | None:
    """
    Return ``(HTTP status, exit code)`` of *error* (:data:`ANSWERS`), or ``None`` if it is none of them.

    ``answer_of(UnknownDag("…"))`` is ``(404, 1)``; ``answer_of(KeyError("x"))`` is ``None``.
    """
    for kind in type(error).__mro__:
        if kind in ANSWERS:
            return ANSWERS[kind]
    return None
