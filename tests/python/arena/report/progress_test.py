import io

from arena.report.progress import Progress


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_plain_lines_name_the_awaited_item_its_stage_and_an_eta_once_one_finished() -> None:
    out, clock = io.StringIO(), Clock()
    progress = Progress(3, out, interactive=False, clock=clock)
    progress.waiting("tasks/a")
    progress.stage("tasks/a", "running")
    progress.stage("tasks/a", "running")  # a heartbeat: the same stage again, no new line
    progress.stage("tasks/b", "running")  # not the one awaited: nothing
    clock.now += 30
    progress.print("[1] tasks/a  PASSED")
    progress.waiting("tasks/b")
    clock.now += 5
    progress.stage("tasks/b", "running")
    progress.close()
    assert out.getvalue().splitlines() == [
        "... [1/3] tasks/a: waiting 0s, ETA after the first result",
        "... [1/3] tasks/a: running 0s, ETA after the first result",
        "[1] tasks/a  PASSED",
        "... [2/3] tasks/b: waiting 0s, ETA 1m00s",  # 30 s an item, 2 to go
        "... [2/3] tasks/b: running 5s, ETA 1m10s",  # 35 s an item now
    ]
    assert "\r" not in out.getvalue()


def test_on_a_terminal_the_status_line_is_redrawn_in_place_and_cleared() -> None:
    out = io.StringIO()
    progress = Progress(2, out, interactive=True)
    progress.waiting("tasks/a")
    progress.stage("tasks/a", "running")
    progress.print("[1] tasks/a  PASSED")
    progress.close()
    text = out.getvalue()
    assert "\r\x1b[2K[1/2] tasks/a: running" in text
    assert "\r\x1b[2K[1] tasks/a  PASSED\n" in text and text.endswith("\r\x1b[2K")
