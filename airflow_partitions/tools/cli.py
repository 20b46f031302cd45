"""
``airflow-partitions`` (console script) and ``airflow partition-tools`` (Airflow's CLI).

Commands: ``explain``, ``check``, ``status``, ``backfill --missing``, ``requeue``, ``discard``,
``clean``, one module each under :mod:`airflow_partitions.tools.commands`; both faces build their
parsers here from the same :class:`~airflow_partitions.tools.commands.base.Command` list.
Exit codes: 0 ok, 1 ``check`` found errors, ``explain``'s key is refused (or would never count),
``status`` found a partition holding keys that never count or starved by the 500-per-loop limit,
or an error of the tools' vocabulary says so (:mod:`~airflow_partitions.tools.errors`: an unknown
Dag, asset or partition; too little access through ``--api-url``, or its api-server refused the
call; the message names why), 2 usage error (bad arguments, naming the option; a mapper
expression that does not build, ``requeue --yes`` while the scheduler has yet to clear runs of
an older rollup definition). Airflow is imported
only when a command runs, reading ``airflow.cfg`` and ``AIRFLOW__*`` variables as ``airflow``
does; ``--api-url`` opens no database.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from airflow_partitions.tools.commands import backfill, check, clean, discard, explain, requeue, status
from airflow_partitions.tools.commands.base import OK, USAGE, Command, without_gc
from airflow_partitions.tools.commands.text import terminal
from airflow_partitions.tools.errors import answer_of
from airflow_partitions.tools.source import source

#: The commands, by name, in the order ``--help`` lists them.
COMMANDS: dict[str, Command] = {
    c.name: c
    for c in (
        explain.COMMAND,
        check.COMMAND,
        status.COMMAND,
        backfill.COMMAND,
        requeue.COMMAND,
        discard.COMMAND,
        clean.COMMAND,
    )
}


def _guarded(command: Command, args: argparse.Namespace) -> int:
    """
    Run *command* on *args*; return its exit code.

    An error of the tools' vocabulary (:mod:`~airflow_partitions.tools.errors`) is printed to
    stderr and exits with its code (:data:`~airflow_partitions.tools.errors.ANSWERS`): an unknown
    Dag, asset or partition, or what the api-server refused, 1; bad input, 2 (``error:`` before
    its message, as argparse says it). The message on one line, its control characters escaped
    (:func:`~airflow_partitions.tools.commands.text.terminal`). Any other error is a bug: its
    traceback.
    """
    try:
        with without_gc():
            return command.handler(
                args, lambda: source(getattr(args, "api_url", None), getattr(args, "token", None))
            )
    except Exception as err:
        answer = answer_of(err)
        if answer is None:
            raise
        code = answer[1]
        said = "error: " if code == USAGE else ""
        print(f"airflow-partitions {command.name}: {said}{terminal(str(err), lines=False)}", file=sys.stderr)
        return code


def build_parser() -> argparse.ArgumentParser:
    """Return the ``airflow-partitions`` argument parser."""
    parser = argparse.ArgumentParser(
        prog="airflow-partitions",
        description=(
            "Explain partition mappers, check Dag folders, show partition state, backfill gaps, re-queue "
            "events after a rollup changed, discard stray pending runs, clean old bookkeeping."
        ),
        epilog="examples:\n  airflow-partitions explain --help\n  airflow-partitions check example_dags",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="{" + ",".join(COMMANDS) + "}")
    for command in COMMANDS.values():
        sub = commands.add_parser(
            command.name,
            help=command.help,
            description=command.description,
            epilog=command.epilog,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        for flags, options in command.arguments:
            sub.add_argument(*flags, **options)
        sub.add_argument(
            "--verbose", action="store_true", help="also print Airflow's own log (import tracebacks …)"
        )
        sub.set_defaults(command_of=command, parser_of=sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """
    Run ``airflow-partitions`` with *argv* (default: the command line); return the exit code.

    ``main(["check", "example_dags"])`` prints the findings and returns 0 when there is no error.
    """
    args, unknown = build_parser().parse_known_args(argv)
    if unknown:  # the command's usage, not the list of commands
        args.parser_of.error(f"unrecognized arguments: {' '.join(unknown)}")
    if not args.verbose and "airflow" not in sys.modules:
        # Airflow logs (a Dag file's import traceback, every Dag it fills the bag with) straight to
        # the terminal, ahead of the answer, which already reports what matters: keep it for --verbose.
        os.environ["AIRFLOW__LOGGING__LOGGING_LEVEL"] = "CRITICAL"
    try:
        return _guarded(args.command_of, args)
    except BrokenPipeError:  # `… | head`: the reader left; say nothing more (Python's recipe)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return OK


def console() -> NoReturn:
    """
    Run the ``airflow-partitions`` console script: exit with :func:`main`'s code for the command line.

    The command runs with the collector off (:func:`_guarded`), and what the process made is
    frozen before the exit: Python's last collection at exit walked every object of the process,
    0.2 s of a 1.3 s ``status`` at a million partitions.
    """
    code = main()
    gc.freeze()
    sys.exit(code)


def get_cli_commands() -> list[Any]:
    """
    Return the ``airflow partition-tools`` command group, for Airflow's provider ``"cli"`` list.

    ``airflow partition-tools explain …`` and ``airflow partition-tools check …`` take the same
    arguments as ``airflow-partitions`` (core's own group is ``airflow partitions``).
    """
    from airflow.cli.cli_config import ActionCommand, Arg, GroupCommand

    def action(command: Command) -> ActionCommand:
        def func(args: argparse.Namespace) -> None:
            code = _guarded(command, args)
            if code:
                sys.exit(code)

        return ActionCommand(
            name=command.name,
            help=command.help,
            func=func,
            args=[Arg(flags, **options) for flags, options in command.arguments],
            description=command.description,
            epilog=command.epilog.replace("airflow-partitions ", "airflow partition-tools "),
        )

    return [
        GroupCommand(
            name="partition-tools",
            help=(
                "Explain mappers, check Dag folders, show partition state, backfill missing partitions, "
                "re-queue events after a rollup changed, discard stray pending runs, clean old bookkeeping"
            ),
            subcommands=[action(command) for command in COMMANDS.values()],
        )
    ]


if __name__ == "__main__":
    console()
