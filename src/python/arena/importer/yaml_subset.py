"""The part of YAML that AgentKernelArena's task configs use, read without a YAML library.

This product's resolve holds no YAML parser, and a task config needs little: block mappings and
lists, plain and quoted scalars (also folded over several lines) and `|`/`>` block scalars.
Anything else (flow collections, anchors, lists of mappings) is refused with the line it is on,
so a config is read correctly or not at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union

Value = Union[str, int, float, bool, None, list, dict]
_INT = re.compile(r"[-+]?[0-9]+")
_FLOAT = re.compile(r"[-+]?([0-9]+\.[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?|[-+]?[0-9]+[eE][-+]?[0-9]+")
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "/": "/", "0": "\0", " ": " "}


class YamlSubsetError(ValueError):
    """Text outside the subset; the message names the line (1-based)."""


@dataclass(frozen=True)
class _Line:
    number: int  # 1-based, for messages
    indent: int
    text: str  # without its indentation


def read_yaml_subset(text: str) -> dict[str, Value]:
    """The top-level mapping of `text`; raises YamlSubsetError outside the subset."""
    lines = [_Line(n, len(raw) - len(raw.lstrip(" ")), raw.strip(" ")) for n, raw in enumerate(text.splitlines(), 1)]
    if any("\t" in line.text[:1] for line in lines):
        raise YamlSubsetError("tabs indent a line")
    reader = _Reader(lines)
    start = reader.next_content(0)
    if start is None:
        return {}
    value, end = reader.block(start, lines[start].indent)
    if reader.next_content(end) is not None:
        raise YamlSubsetError(f"line {lines[reader.next_content(end) or 0].number}: unexpected indentation")
    if not isinstance(value, dict):
        raise YamlSubsetError("the document is not a mapping")
    return value


class _Reader:
    def __init__(self, lines: list[_Line]) -> None:
        self.lines = lines

    def next_content(self, index: int) -> int | None:
        """The first line at or after `index` that is neither blank nor a comment."""
        while index < len(self.lines):
            text = self.lines[index].text
            if text and not text.startswith("#"):
                return index
            index += 1
        return None

    def block(self, index: int, indent: int) -> tuple[Value, int]:
        """The mapping or list whose first line is `index`, at `indent`; (value, next line)."""
        if _is_item(self.lines[index].text):
            return self.sequence(index, indent)
        return self.mapping(index, indent)

    def mapping(self, index: int, indent: int) -> tuple[dict[str, Value], int]:
        result: dict[str, Value] = {}
        at: int | None = index
        while at is not None and self.lines[at].indent == indent and not _is_item(self.lines[at].text):
            line = self.lines[at]
            key, sep, rest = line.text.partition(":")
            if not sep or (rest and not rest.startswith(" ")) or not key or key[0] in "\"'{[&*!":
                raise YamlSubsetError(f"line {line.number}: expected 'key: value'")
            if key in result:
                raise YamlSubsetError(f"line {line.number}: key {key!r} given twice")
            result[key], end = self.value_after(at, rest.strip(), indent, allow_same_indent_list=True)
            at = self.next_content(end)
        if at is not None and self.lines[at].indent > indent:
            raise YamlSubsetError(f"line {self.lines[at].number}: unexpected indentation")
        return result, at if at is not None else len(self.lines)

    def sequence(self, index: int, indent: int) -> tuple[list[Value], int]:
        items: list[Value] = []
        at: int | None = index
        while at is not None and self.lines[at].indent == indent and _is_item(self.lines[at].text):
            rest = self.lines[at].text[1:].strip()
            if _looks_like_key(rest):
                raise YamlSubsetError(f"line {self.lines[at].number}: lists of mappings are not read")
            value, end = self.value_after(at, rest, indent, allow_same_indent_list=False)
            items.append(value)
            at = self.next_content(end)
        return items, at if at is not None else len(self.lines)

    def value_after(self, at: int, rest: str, indent: int, allow_same_indent_list: bool) -> tuple[Value, int]:
        """The value that starts with `rest` on line `at` (a key's or an item's); (value, next line)."""
        number = self.lines[at].number
        if rest.startswith(("|", ">")):
            return self.block_scalar(at, rest, indent)
        if rest.startswith(("[", "{", "&", "*", "!")):
            raise YamlSubsetError(f"line {number}: flow collections, anchors and tags are not read")
        if rest and not rest.startswith("#"):
            return self.scalar(at, rest, indent)
        following = self.next_content(at + 1)
        if following is None:
            return None, len(self.lines)
        child = self.lines[following]
        if child.indent > indent or (allow_same_indent_list and child.indent == indent and _is_item(child.text)):
            return self.block(following, child.indent)
        return None, at + 1

    def scalar(self, at: int, first: str, indent: int) -> tuple[Value, int]:
        """A plain or quoted scalar, continued on the lines indented past `indent`."""
        parts, end = [first], at + 1
        quote = first[0] if first[0] in "\"'" else ""
        while end < len(self.lines) and not (quote and _closed(" ".join(parts), quote)):
            line = self.lines[end]
            if line.text and (line.indent <= indent or (not quote and line.text.startswith("#"))):
                break
            if not quote and (": " in line.text or line.text.endswith(":")):
                raise YamlSubsetError(f"line {line.number}: unexpected indentation")  # as YAML: no key here
            parts.append(line.text)
            end += 1
        if quote:
            return _quoted(parts, quote, self.lines[at].number), end
        return _plain(" ".join(part for part in parts if part)), end

    def block_scalar(self, at: int, header: str, indent: int) -> tuple[str, int]:
        """A `|` (lines kept) or `>` (lines folded) scalar; `-` strips the final newline."""
        if header.split("#")[0].strip() not in ("|", "|-", ">", ">-"):
            raise YamlSubsetError(f"line {self.lines[at].number}: block scalar header {header!r} is not read")
        end, body = at + 1, []
        while end < len(self.lines) and (not self.lines[end].text or self.lines[end].indent > indent):
            body.append(self.lines[end])
            end += 1
        while body and not body[-1].text:
            body.pop()
        margin = min((line.indent for line in body if line.text), default=0)
        texts = [" " * (line.indent - margin) + line.text if line.text else "" for line in body]
        joined = "\n".join(texts) if header.startswith("|") else _fold(texts)
        return joined + ("" if header.startswith(("|-", ">-")) or not texts else "\n"), end


def _is_item(text: str) -> bool:
    return text == "-" or text.startswith("- ")


def _looks_like_key(text: str) -> bool:
    key, sep, rest = text.partition(":")
    return bool(sep) and bool(key) and key[0] not in "\"'" and (not rest or rest.startswith(" "))


def _closed(text: str, quote: str) -> bool:
    """True once the quoted scalar opened at text[0] has its closing quote."""
    index = 1
    while index < len(text):
        if quote == '"' and text[index] == "\\":
            index += 2
            continue
        if text[index] == quote:
            if quote == "'" and text[index + 1 : index + 2] == "'":
                index += 2
                continue
            return True
        index += 1
    return False


def _quoted(parts: list[str], quote: str, number: int) -> str:
    """A quoted scalar's value: line breaks fold to spaces (blank lines to newlines), then escapes."""
    text = parts[0]
    for part in parts[1:]:
        if quote == '"' and text.endswith("\\") and not text.endswith("\\\\"):
            text = text[:-1] + part  # an escaped line break joins without a space
        elif not part:
            text += "\n"
        else:
            text += ("" if text.endswith("\n") else " ") + part
    if not _closed(text, quote):
        raise YamlSubsetError(f"line {number}: the quoted scalar is not closed")
    body, out, index = text[1:], [], 0
    while index < len(body):
        char = body[index]
        if char == quote and not (quote == "'" and body[index + 1 : index + 2] == "'"):
            break
        if quote == "'" and char == "'":
            out.append("'")
            index += 2
            continue
        if quote == '"' and char == "\\":
            escaped = body[index + 1 : index + 2]
            if escaped not in _ESCAPES:
                raise YamlSubsetError(f"line {number}: escape \\{escaped} is not read")
            out.append(_ESCAPES[escaped])
            index += 2
            continue
        out.append(char)
        index += 1
    trailing = body[index + 1 :].strip()
    if trailing and not trailing.startswith("#"):
        raise YamlSubsetError(f"line {number}: text after the closing quote")
    return "".join(out)


def _fold(texts: list[str]) -> str:
    """`>` folding: single line breaks become spaces, blank lines become line breaks."""
    out = ""
    for text in texts:
        if not text:
            out += "\n"
        elif out and not out.endswith("\n"):
            out += " " + text
        else:
            out += text
    return out


def _plain(text: str) -> Value:
    text = text.split(" #", 1)[0].strip()
    if text in ("", "~", "null", "Null", "NULL"):
        return None
    if text in ("true", "True", "TRUE", "false", "False", "FALSE"):
        return text.lower() == "true"
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    return text
