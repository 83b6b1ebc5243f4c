from dataclasses import dataclass
from pathlib import Path

from arena.evaluation.key import cache_key, canonical_json
from arena.harness.version import digest_tree, harness_version


@dataclass(frozen=True)
class _Settings:
    timeout_s: float = 600
    cases: tuple[str, ...] = ()
    device: int = 0


def test_same_inputs_same_key_and_every_input_counts() -> None:
    base = cache_key("t", "c", "e", "h", _Settings())
    assert base == cache_key("t", "c", "e", "h", _Settings())
    assert len(base) == 64 and int(base, 16) >= 0
    changed = {
        cache_key("t2", "c", "e", "h", _Settings()),
        cache_key("t", "c2", "e", "h", _Settings()),
        cache_key("t", "c", "e2", "h", _Settings()),
        cache_key("t", "c", "e", "h2", _Settings()),
        cache_key("t", "c", "e", "h", _Settings(timeout_s=5)),
        cache_key("t", "c", "e", "h", _Settings(cases=("small",))),
        cache_key("t", "c", "e", "h", _Settings(), task="tasks/x/other:other"),
    }
    assert base not in changed and len(changed) == 7


def test_the_gpu_a_job_ran_on_is_not_part_of_the_key() -> None:
    # A suite on several GPUs must hit the cache whichever lane takes a task next time.
    assert cache_key("t", "c", "e", "h", _Settings(device=0)) == cache_key("t", "c", "e", "h", _Settings(device=3))


def test_canonical_json_ignores_key_order_and_tuple_vs_list() -> None:
    assert canonical_json({"b": (1, 2), "a": 1}) == canonical_json({"a": 1, "b": [1, 2]}) == '{"a":1,"b":[1,2]}'


def test_digest_tree_sees_content_names_and_new_files(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.h").write_text("int f();\n")
    first = digest_tree(tmp_path)
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"junk")
    assert digest_tree(tmp_path) == first  # caches do not count
    (tmp_path / "sub" / "b.h").write_text("int g();\n")
    second = digest_tree(tmp_path)
    assert second != first
    (tmp_path / "sub" / "b.h").rename(tmp_path / "sub" / "c.h")
    assert digest_tree(tmp_path) != second


def test_harness_version_is_the_digest_of_the_harness_package() -> None:
    import arena.harness

    assert harness_version() == digest_tree(Path(arena.harness.__file__).parent)
    assert len(harness_version()) == 64
