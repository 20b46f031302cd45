"""Hypothesis settings for the unit suite: modest example counts, no per-example deadline."""

from __future__ import annotations

from hypothesis import settings

settings.register_profile("airflow-partitions-unit", max_examples=200, deadline=None)
settings.load_profile("airflow-partitions-unit")
