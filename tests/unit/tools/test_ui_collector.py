"""The view's requests run with Python's cyclic collector paused (tools/ui/app.py), and leave it as it was."""

from __future__ import annotations

import asyncio
import gc

import pytest

from airflow_partitions.tools.ui.app import collector_paused


def test_a_request_runs_with_the_collector_paused_and_turns_it_back_on() -> None:
    seen = []

    async def call_next(request: object) -> str:
        seen.append(gc.isenabled())
        return "the response"

    assert gc.isenabled()
    assert asyncio.run(collector_paused(None, call_next)) == "the response"  # type: ignore[arg-type]
    assert seen == [False] and gc.isenabled()


def test_a_request_that_fails_turns_it_back_on_too() -> None:
    async def call_next(request: object) -> str:
        raise RuntimeError("the route failed")

    with pytest.raises(RuntimeError, match="the route failed"):
        asyncio.run(collector_paused(None, call_next))  # type: ignore[arg-type]
    assert gc.isenabled()
