import pytest

from arena.harness.student_t import t975


def test_t_is_the_tables_entry_at_or_below_the_degrees_of_freedom():
    assert t975(1) == 12.706 and t975(5) == 2.571
    # Between entries the one below: wider than the truth, never narrower (t(13) is 2.160).
    assert t975(13) == 2.179 >= 2.160
    assert t975(10_000) == 1.980
    with pytest.raises(ValueError, match="degree of freedom"):
        t975(0)
