"""forbidden.check_preprocessed on preprocessor output written by hand (the compiler run itself:
cheat_native_back_door_test.py)."""

from arena.harness.forbidden import check_preprocessed, own_lines

OUTPUT = """# 1 "/job/candidate/kernel.hip"
int a;
# 1 "/usr/include/dlfcn.h" 1
extern void* dlopen(const char*, int);
# 4 "/job/candidate/kernel.hip" 2
static void* h = dlopen(0, 0);
"""


def test_only_the_sides_own_lines_are_kept():
    kept = own_lines(OUTPUT, "/job/candidate")
    assert "dlopen(0, 0)" in kept and "extern void* dlopen" not in kept
    assert len(kept.splitlines()) == len(OUTPUT.splitlines())  # line numbers still count


def test_a_name_whole_after_the_preprocessor_is_found():
    findings = check_preprocessed(
        OUTPUT, "/job/candidate", '# 1 "/job/baseline/kernel.hip"\nint a;\n', "/job/baseline", ()
    )
    assert [f.what for f in findings] == ["uses dlopen"]


def test_what_the_baseline_does_too_is_allowed_but_task_rules_are_not():
    baseline = '# 1 "/job/baseline/kernel.hip"\nstatic void* h = dlopen(0, 0);\nint b;\n'
    assert check_preprocessed(OUTPUT, "/job/candidate", baseline, "/job/baseline", ()) == []
    findings = check_preprocessed(OUTPUT, "/job/candidate", baseline, "/job/baseline", ("dlopen",))
    assert findings and findings[0].task_rule
