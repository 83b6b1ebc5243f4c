"""The runner test kit's fixtures (arena_testing.runner_kit) for the tests in this folder, and
arena's default folders under each test's tmp_path (arena_testing.xdg)."""

from arena_testing.runner_kit import kit, make_runner, repo, serve_runner, tokens  # noqa: F401
from arena_testing.xdg import private_xdg  # noqa: F401
