"""Fixtures of the pool's tests."""

from arena_testing.control_groups import groups  # noqa: F401 (a fixture: worker_limits_test)
