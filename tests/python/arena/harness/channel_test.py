import pytest

from arena.harness.channel import ChannelError, open_frame, sign_frame


def test_round_trip():
    assert open_frame(b"k" * 32, sign_frame(b"k" * 32, '{"a": 1}')) == '{"a": 1}'


@pytest.mark.parametrize("frame", [b"", b"garbage", b"0" * 64 + b"\n{}"])
def test_forged_frames_fail(frame):
    with pytest.raises(ChannelError):
        open_frame(b"k" * 32, frame)


def test_wrong_key_and_appended_bytes_fail():
    frame = sign_frame(b"k" * 32, "{}")
    with pytest.raises(ChannelError):
        open_frame(b"x" * 32, frame)
    with pytest.raises(ChannelError):
        open_frame(b"k" * 32, frame + b"junk")
    with pytest.raises(ChannelError):
        open_frame(b"k" * 32, b"junk" + frame)
