from __future__ import annotations

import pytest

from arena.importer.yaml_subset import YamlSubsetError, read_yaml_subset

# The shapes AgentKernelArena's configs take: both list indentations, a `|` block, a folded plain
# scalar, a double-quoted scalar over several lines with escapes, nulls and a comment.
CONFIG = """\
# a comment
source_file_path:
  - source/kernel.py

target_kernel_functions:
- _kernel
- _other_kernel
compile_command:
  - python3 -c "import ast; ast.parse(open('kernel.py').read())"
task_result_template: null
prompt:
  source_code: ~
  instructions: |
    Optimize it.

      Keep this indent.
  summary: Optimize the kernel
    over two lines.
  quoted: "\\nYou are an expert.\\
    \\ Keep \\"quotes\\".\\n"
  folded: >-
    one
    two
timeout: 30
ratio: 0.5
"""


def test_the_configs_shapes_read_as_yaml_would() -> None:
    assert read_yaml_subset(CONFIG) == {
        "source_file_path": ["source/kernel.py"],
        "target_kernel_functions": ["_kernel", "_other_kernel"],
        "compile_command": ["python3 -c \"import ast; ast.parse(open('kernel.py').read())\""],
        "task_result_template": None,
        "prompt": {
            "source_code": None,
            "instructions": "Optimize it.\n\n  Keep this indent.\n",
            "summary": "Optimize the kernel over two lines.",
            "quoted": '\nYou are an expert. Keep "quotes".\n',
            "folded": "one two",
        },
        "timeout": 30,
        "ratio": 0.5,
    }


def test_an_empty_document_is_an_empty_mapping() -> None:
    assert read_yaml_subset("# nothing\n\n") == {}


@pytest.mark.parametrize(
    "text, message",
    [
        ("a: [1, 2]\n", "line 1: flow collections, anchors and tags are not read"),
        ("a:\n  - b: 1\n", "line 2: lists of mappings are not read"),
        ("a: 1\n   b: 2\n", "line 2: unexpected indentation"),
        ('a: "open\n', "line 1: the quoted scalar is not closed"),
        ("a: 1\na: 2\n", "line 2: key 'a' given twice"),
        ("just text\n", "line 1: expected 'key: value'"),
        ("- a\n", "the document is not a mapping"),
        ('a: "\\q"\n', "line 1: escape \\q is not read"),
    ],
)
def test_text_outside_the_subset_is_refused_with_its_line(text: str, message: str) -> None:
    with pytest.raises(YamlSubsetError, match=message.replace("[", r"\[").replace("\\q", r"\\q")):
        read_yaml_subset(text)
