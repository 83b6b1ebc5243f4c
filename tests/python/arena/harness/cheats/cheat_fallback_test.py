# Attack 3: try/except fallback to PyTorch, or importing the task's reference (the oracle).
# Expected verdict: CHEAT_DETECTED for the fallback (static); the reference is not importable
# from the candidate's folder, so importing it fails to build (COMPILE_ERROR).


def test_try_except_fallback(run_candidate):
    result = run_candidate("""
        import torch


        def add(x, y):
            try:
                raise NotImplementedError
            except NotImplementedError:
                return torch.add(x, y)
    """)
    assert result.status == "CHEAT_DETECTED"


def test_reference_is_not_importable(run_candidate):
    result = run_candidate("from reference import add\n")
    assert result.status == "COMPILE_ERROR"
    assert "reference" in " ".join(result.errors)
