from arena.harness.op_families import FAMILIES, own_name, with_families


def test_a_rule_that_marks_a_family_brings_every_member():
    rules = with_families(["torch.Tensor.matmul", "torch.exp"])
    assert rules[:2] == ("torch.Tensor.matmul", "torch.exp")
    assert {"torch.chain_matmul", "torch.linalg.matmul", "torch._scaled_mm", "torch.nn.functional.linear"} <= set(rules)
    assert "torch.softmax" not in rules


def test_rules_that_mark_no_family_are_kept_as_they_are():
    assert with_families(["torch.add", "torch.nn.functional"]) == ("torch.add", "torch.nn.functional")


def test_members_are_added_once_and_after_the_rules():
    rules = with_families(["torch.mm", "torch.chain_matmul", "torch.nn.attention", "torch.softmax"])
    assert len(rules) == len(set(rules))
    assert rules[:4] == ("torch.mm", "torch.chain_matmul", "torch.nn.attention", "torch.softmax")
    assert "torch._scaled_dot_product_flash_attention" in rules and "torch.special.log_softmax" in rules


def test_own_names_drop_the_underscores_around_them():
    assert own_name("torch._softmax") == "softmax" and own_name("torch.linalg") == "linalg"
    assert all(f.marks and f.members for f in FAMILIES)
