# Attack 6: cache results across calls keyed on the input's pointer and shape.
# Every case is checked on the same working buffers with new contents (the declared seed, then
# hidden seeds), and timed calls rotate contents the same way.
# Expected verdict: INCORRECT.

from arena_testing.harness_tasks import TRITON_ADD


def test_pointer_keyed_cache(run_candidate):
    source = TRITON_ADD.replace(
        "def add(x, y):\n",
        "_cache = {}\n\n\ndef add(x, y):\n    key = (x.data_ptr(), tuple(x.shape))\n    if key in _cache:\n        return _cache[key].clone()\n",
    ).replace("    return z", "    _cache[key] = z.clone()\n    return z")
    result = run_candidate(source)
    assert result.status == "INCORRECT"
    assert any(c.hidden and not c.correct for c in result.cases)
