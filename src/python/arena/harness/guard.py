"""Runtime guards around candidate calls: what a static check cannot see.

- Identity snapshot: every callable of the modules and classes the harness measures and
  reports with (torch, torch.Tensor, torch.cuda, its Event, time, json, hmac, builtins, arena.*)
  is recorded before the candidate is imported; a replaced one afterwards is a patched timer,
  checker or serializer.
- No torch function/dispatch mode may stay active after a call (a mode could fake the checks).
- No Python thread may outlive a call (work finished after the timer stops), however started.
- The torch functions a checked call runs, matched against the task's forbidden names.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import hashlib
import hmac
import json
import os
import sys
import threading
import time
from typing import Callable, Iterable

import torch

from arena.harness.op_families import with_families

Snapshot = dict[str, int]


# The torch functions the harness itself calls (the whole torch namespace is not watched:
# torch legitimately re-wraps some of its functions when torch._dynamo is first imported).
_TORCH_USED = (
    "isnan",
    "isinf",
    "isfinite",
    "equal",
    "unravel_index",
    "empty",
    "empty_like",
    "full",
    "zeros",
    "pow",
    "rand",
    "randn",
    "randint",
    "tensor",
    "Generator",
    "Tensor",
)


class _Names:
    """A namespace of selected attributes, so they can be snapshotted like a module."""

    def __init__(self, owner: object, names: Iterable[str]) -> None:
        self.__dict__.update({n: getattr(owner, n) for n in names if hasattr(owner, n)})
        self._owner, self._names = owner, tuple(names)

    def current(self) -> dict[str, object]:
        return {n: getattr(self._owner, n) for n in self._names if hasattr(self._owner, n)}


def _watched() -> list[tuple[str, object]]:
    spaces: list[tuple[str, object]] = [
        ("builtins", builtins),
        ("time", time),
        ("os", os),
        ("json", json),
        ("hmac", hmac),
        ("hashlib", hashlib),
        ("dataclasses", dataclasses),
        ("torch", _Names(torch, _TORCH_USED)),
        ("torch.Tensor", torch.Tensor),
        ("torch.cuda", torch.cuda),
        ("torch.cuda.Event", torch.cuda.Event),
        ("threading", _Names(threading, ("enumerate", "active_count"))),  # thread_count()
        ("sys", _Names(sys, ("_current_frames",))),
    ]
    for name, module in sorted(sys.modules.items()):
        if name == "arena" or name.startswith("arena."):
            spaces.append((name, module))
            spaces += [
                (f"{name}.{k}", v)
                for k, v in vars(module).items()
                if isinstance(v, type) and getattr(v, "__module__", "") == name
            ]
    return spaces


def take_snapshot() -> Snapshot:
    """id() of every callable or property in the watched namespaces, and of each Python function's
    code; of a class, those it inherits too (torch.Tensor.copy_ is torch._C.TensorBase's: one set
    on torch.Tensor shadows it)."""
    snap: Snapshot = {}
    for label, space in _watched():
        items = space.current() if isinstance(space, _Names) else _attributes(space)
        for key, value in list(items.items()):
            if callable(value) or isinstance(value, (property, staticmethod, classmethod)):
                snap[f"{label}.{key}"] = id(value)
                code = getattr(getattr(value, "__func__", value), "__code__", None)
                if code is not None:  # a function's code swapped in place keeps the function's id
                    snap[f"{label}.{key}.__code__"] = id(code)
    return snap


def _attributes(space: object) -> dict[str, object]:
    """A module's own attributes; a class's as its instances find them, each as stored (the
    nearest class of the MRO that holds it), not bound anew on every lookup."""
    if not isinstance(space, type):
        return dict(vars(space))
    found: dict[str, object] = {}
    for owner in reversed(space.__mro__):
        found.update(vars(owner))
    return found


def replaced_names(before: Snapshot) -> list[str]:
    """Names whose object changed or vanished since `before` (additions are allowed: lazy imports)."""
    now = take_snapshot()
    changed = {name for name, ident in before.items() if now.get(name) != ident}
    # A function replaced whole is named once; one whose code alone was swapped, as `name.__code__`.
    return sorted(name for name in changed if name.removesuffix(".__code__") == name or name[:-9] not in changed)


def active_modes() -> str:
    """'' when no torch function or dispatch mode is active, else which."""
    function_modes = torch._C._len_torch_function_stack()
    dispatch_modes = torch._C._len_torch_dispatch_stack()
    if function_modes or dispatch_modes:
        return f"{function_modes} torch function mode(s) and {dispatch_modes} dispatch mode(s) left active"
    return ""


def thread_count() -> int:
    """The Python threads of this process: those the threading module lists, and those running
    Python code that it does not (started through _thread, which a thread the first call starts
    that way would otherwise hide among a library's native pools: the kernel's count is settled
    after that call). A thread that runs only native code is in neither (the kernel counts it)."""
    return len({t.ident for t in threading.enumerate()} | set(sys._current_frames()))


def forbidden_ops(calls: Iterable[str], forbidden: Iterable[str]) -> list[str]:
    """The recorded torch calls (e.g. "torch.Tensor.add") that a forbidden name (e.g. "torch.add",
    "torch.nn.functional", "softmax"), or a member of a family it marks (op_families), covers:
    same dotted prefix, or the same last component (so a method or operator form of a forbidden
    function counts too), each component read without the underscores around it (the recorder
    names torch._foreach_add_ "torch.foreach_add")."""
    rules = [_bare(rule) for rule in with_families(forbidden)]
    hits = []
    for call in sorted(set(calls)):
        name = _bare(call)
        last = name.rsplit(".", 1)[-1]
        for rule in rules:
            if name == rule or name.startswith(rule + ".") or last == rule.rsplit(".", 1)[-1]:
                hits.append(call)
                break
    return hits


def _bare(dotted: str) -> str:
    return ".".join(part.strip("_") for part in dotted.split("."))


# torch's public namespaces whose functions are C functions of torch._C's own modules:
# torch.nn.functional.linear is torch._C._nn.linear, torch.linalg.matmul torch._C._linalg.linalg_matmul,
# and neither function's module names the namespace a task forbids.
PUBLIC_NAMESPACES = (
    "torch.nn.functional",
    "torch.linalg",
    "torch.special",
    "torch.fft",
    "torch.sparse",
    "torch.nested",
)


def public_names() -> dict[str, tuple[str, ...]]:
    """By the name a C function of torch carries (`linear`, `linalg_matmul`; an operator of
    torch.ops.aten carries the same), the dotted names torch's public namespaces export it as."""
    import importlib

    names: dict[str, list[str]] = {}
    for namespace in PUBLIC_NAMESPACES:
        module = importlib.import_module(namespace)
        for attribute, value in vars(module).items():
            own = getattr(value, "__name__", None)
            if not attribute.startswith("_") and type(value).__name__ == "builtin_function_or_method" and own:
                names.setdefault(own, []).append(f"{namespace}.{attribute}")
    return {own: tuple(dotted) for own, dotted in names.items()}


class OpRecorder:
    """Records the torch functions and Tensor methods run inside `watch` as dotted names
    ("torch.add", "torch.Tensor.softmax", operators included), until `take`n; a C function that a
    public namespace exports also under that namespace's name (F.linear: "torch.linear" and
    "torch.nn.functional.linear"), an operator of torch.ops by its own name ("torch.mm"). The
    worker watches every call of the candidate with one (checked, repeated, warm-up, timed and
    profiled calls alike), so the mode it finds on its stack says nothing about which call it is
    in. (A function mode rather than a dispatch mode: the first dispatch mode imports
    torch._dynamo, about 2 s.)"""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self._mode = _recording_mode(self.seen, public_names())

    def watch(self, call: Callable[[], object]) -> object:
        with self._mode:
            return call()

    def take(self) -> list[str]:
        ops = sorted(self.seen)
        self.seen.clear()
        return ops


def _recording_mode(seen: set[str], public: dict[str, tuple[str, ...]]) -> contextlib.AbstractContextManager[object]:
    from torch._ops import OpOverload, OpOverloadPacket
    from torch.overrides import TorchFunctionMode

    class _Recorder(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            # torch.ops.aten.mm.default: the operator mm, whatever overload, also as "torch.ops.aten.mm"
            packet = func.overloadpacket if isinstance(func, OpOverload) else func
            name = packet.__name__ if isinstance(packet, OpOverloadPacket) else getattr(func, "__name__", "")
            module = getattr(func, "__module__", None) or "torch.Tensor"
            seen.add(f"{'torch' if module.startswith('torch._') else module}.{name.strip('_')}")
            if isinstance(packet, OpOverloadPacket):
                seen.add("torch.ops." + packet._qualified_op_name.replace("::", "."))
            seen.update(public.get(name, ()))
            return func(*args, **(kwargs or {}))

    return _Recorder()


def record_ops(call: Callable[[], object]) -> tuple[object, set[str]]:
    """Run `call` under a fresh OpRecorder: (its result, the torch calls it ran)."""
    recorder = OpRecorder()
    result = recorder.watch(call)
    return result, set(recorder.take())


def forbidden_in(ops: object, forbidden: Iterable[str], where: str) -> str:
    """The verdict's text when the worker's reported torch calls (`ops`, untrusted: anything but
    a list of names counts as none) hit a forbidden name, else ''."""
    names = [str(o) for o in ops] if isinstance(ops, list) else []
    hits = forbidden_ops(names, forbidden)
    return f"the candidate called forbidden torch function(s) {where}: {', '.join(hits)}" if hits else ""
