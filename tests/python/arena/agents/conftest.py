"""The runner test kit's fixtures (arena_testing.runner_kit) for the tests in this folder."""

from arena_testing.runner_kit import kit, make_runner, repo, serve_runner, tokens  # noqa: F401
