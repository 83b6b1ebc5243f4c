"""Static forbidden-API check of a candidate's files, before any of them is imported or built.

Python files are parsed with `ast` (imports with their aliases, attribute paths, names,
`getattr(x, "literal")`, assignments to attributes of imported modules: monkey-patching).
HIP/C++ files are tokenized after comments are removed. Two rule sets apply:
- the task's `forbidden` entries, always (a dotted name matches a path prefix; a bare
  identifier matches any name, attribute or token);
- the harness's own rules below (tools for cheating the measurement), except what the
  baseline itself already does, so a baseline never fails as its own candidate.
Static checks in Python can be evaded (strings built at run time); the runtime guards in
guard.py and the measurement itself are the second line.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Iterable, Mapping

from arena.harness.op_families import with_families

PYTHON_SUFFIXES = (".py",)
NATIVE_SUFFIXES = (".hip", ".cu", ".cuh", ".h", ".hpp", ".cpp", ".cc", ".c")

# Modules that reach the harness, its memory, the process, threads or the runtime behind torch.
HARNESS_MODULES = (
    "arena",
    "ctypes",
    "cffi",
    "gc",
    "inspect",
    "sys",
    "builtins",
    "importlib",
    "pickle",
    "marshal",
    "threading",
    "_thread",
    "multiprocessing",
    "concurrent",
    "subprocess",
    "signal",
    "socket",
    "resource",
    "mmap",
    "shutil",
    "tempfile",
    "cuda",
    "cupy",
    "pycuda",
    "numba",
    "pynvml",
    "hip",
    "torch.utils.cpp_extension",
    "torch.overrides",
    "torch.utils._python_dispatch",
)
HARNESS_PATHS = (
    "torch.cuda.Stream",
    "torch.cuda.stream",
    "torch.cuda.set_stream",
    "torch.cuda.Event",
    "torch.cuda.synchronize",
    "torch.cuda.graph",
    "torch.cuda.CUDAGraph",
    "torch.cuda.memory",
    "torch.cuda.caching_allocator_alloc",
    "torch.ops",
    "torch.library",
    "torch._C",
    "torch._dynamo",
    "torch.compile",
    "torch.overrides",
    "os.kill",
    "os.killpg",
    "os._exit",
    "os.fork",
    "os.forkpty",
    "os.system",
    "os.popen",
    "os.write",
    "os.dup",
    "os.dup2",
    "os.close",
    "os.setsid",
    "os.open",
    "os.execv",
    "os.execve",
    "os.execvp",
    "os.spawnv",
    "os.posix_spawn",
    "time.perf_counter",
)
HARNESS_NAMES = (
    "__import__",
    "eval",
    "exec",
    "compile",
    "globals",
    "locals",
    "vars",
    "open",
    "breakpoint",
    "setattr",
    "delattr",
    "__builtins__",
    "__subclasses__",
    "__globals__",
    "__code__",
    "_getframe",
)
# Native: side streams, persisting-L2 windows, threads and processes, vendor math libraries.
HARNESS_TOKENS = (
    "hipStreamCreate",
    "hipStreamCreateWithFlags",
    "hipStreamCreateWithPriority",
    "cudaStreamCreate",
    "cudaStreamCreateWithFlags",
    "cudaStreamCreateWithPriority",
    "hipStreamSetAttribute",
    "cudaStreamSetAttribute",
    "accessPolicyWindow",
    "hipDeviceSetLimit",
    "cudaDeviceSetLimit",
    "pthread_create",
    "fork",
    "vfork",
    "system",
    "popen",
    "execv",
    "execve",
    "execvp",
    "dlopen",
    "dlsym",
)
HARNESS_TOKEN_PREFIXES = (
    "hipblas",
    "rocblas",
    "cublas",
    "cudnn",
    "miopen",
    "hipdnn",
    "cufft",
    "hipfft",
    "cusparse",
    "hipsparse",
    "cusolver",
    "rocsolver",
    "hipsolver",
    "rocfft",
)
_STD_THREADS = re.compile(r"\bstd\s*::\s*(thread|jthread|async)\b")
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_LINE_MARKER = re.compile(r'^#\s*(?:line\s+)?\d+\s+"([^"]*)"')


@dataclass(frozen=True)
class Finding:
    file: str
    line: int
    what: str  # e.g. "imports ctypes", "uses torch.cuda.Stream"
    task_rule: bool  # from the task's `forbidden` (never exempted by the baseline)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.what}"


def check_candidate(
    files: Mapping[str, bytes], baseline: Mapping[str, bytes], task_forbidden: Iterable[str]
) -> list[Finding]:
    """Findings in the candidate's files, less the harness-rule findings its baseline has too (the
    task's rules with the families they mark: op_families)."""
    forbidden = with_families(task_forbidden)
    allowed = {f.what for f in _scan(baseline, forbidden) if not f.task_rule}
    return [f for f in _scan(files, forbidden) if f.task_rule or f.what not in allowed]


def check_preprocessed(
    candidate: str, candidate_dir: str, baseline: str, baseline_dir: str, task_forbidden: Iterable[str]
) -> list[Finding]:
    """The native rules on the preprocessor's output (token pasting and macros undone), on the
    lines that came from the side's own folder (headers of the toolkit declare what they like),
    less the harness-rule findings the baseline's own output has."""
    forbidden = with_families(task_forbidden)
    theirs = _scan_native("baseline", own_lines(baseline, baseline_dir), forbidden)
    allowed = {f.what for f in theirs if not f.task_rule}
    found = _scan_native("candidate (preprocessed)", own_lines(candidate, candidate_dir), forbidden)
    return [f for f in found if f.task_rule or f.what not in allowed]


def own_lines(preprocessed: str, directory: str) -> str:
    """The lines of `preprocessed` that line markers place in a file under `directory` (others are
    kept as empty lines, so line numbers still count the output's lines)."""
    root = directory.rstrip("/") + "/"
    inside, lines = False, []
    for line in preprocessed.splitlines():
        marker = _LINE_MARKER.match(line)
        if marker:
            inside = marker.group(1).startswith(root)
            lines.append("")
        else:
            lines.append(line if inside else "")
    return "\n".join(lines)


def _scan(files: Mapping[str, bytes], forbidden: tuple[str, ...]) -> list[Finding]:
    findings: list[Finding] = []
    for name, content in sorted(files.items()):
        text = content.decode(errors="replace")
        if name.endswith(PYTHON_SUFFIXES):
            findings += _scan_python(name, text, forbidden)
        elif name.endswith(NATIVE_SUFFIXES):
            findings += _scan_native(name, text, forbidden)
    return findings


def _task_rule(path: str, rules: Iterable[str]) -> str | None:
    """The task rule `path` breaks: a dotted rule by prefix, a bare one as any component."""
    for rule in rules:
        if path == rule or path.startswith(rule + ".") or ("." not in rule and rule in path.split(".")):
            return rule
    return None


def _harness_rule(path: str, rules: Iterable[str]) -> str | None:
    return next((r for r in rules if path == r or path.startswith(r + ".")), None)


def _scan_python(file: str, text: str, forbidden: tuple[str, ...]) -> list[Finding]:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []  # the compile stage reports it
    aliases: dict[str, str] = {}
    out: list[Finding] = []

    def report(node: ast.AST, path: str, verb: str, module_rooted: bool) -> None:
        line = getattr(node, "lineno", 0)
        task_rule = _task_rule(path, forbidden)
        if task_rule:
            out.append(Finding(file, line, f"{verb} {path} (forbidden by the task: {task_rule})", True))
        elif module_rooted and _harness_rule(path, HARNESS_MODULES + HARNESS_PATHS):
            out.append(Finding(file, line, f"{verb} {path}", False))

    for node in ast.walk(tree):  # imports first, so every alias is known below
        if isinstance(node, ast.Import):
            for a in node.names:
                root = a.name.split(".")[0]
                aliases[a.asname or root] = a.name if a.asname else root
                report(node, a.name, "imports", True)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
                report(node, f"{node.module}.{a.name}", "imports", True)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in HARNESS_NAMES and node.id not in aliases:
            out.append(Finding(file, node.lineno, f"uses {node.id}", False))
        elif isinstance(node, ast.Attribute) and node.attr.startswith("__") and node.attr in HARNESS_NAMES:
            out.append(Finding(file, node.lineno, f"uses .{node.attr}", False))
        elif isinstance(node, ast.Attribute) and node.attr == "_getframe":
            out.append(Finding(file, node.lineno, "uses ._getframe", False))
        if isinstance(node, (ast.Attribute, ast.Call, ast.Name)):
            path = _dotted(node, aliases)
            if path and (not isinstance(node, ast.Name) or any("." not in r and r == node.id for r in forbidden)):
                report(node, path, "uses", _root_name(node) in aliases)
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            for target in targets:
                if isinstance(target, ast.Attribute) and _root_name(target) in aliases:
                    out.append(
                        Finding(
                            file,
                            node.lineno,
                            f"assigns to {_dotted(target, aliases)} (patches a module)",
                            False,
                        )
                    )
    return _unique(out)


def _dotted(node: ast.AST, aliases: Mapping[str, str]) -> str:
    """`a.b.c` (aliases resolved; getattr(x, "lit") read as x.lit) or "" when not a plain path."""
    if isinstance(node, ast.Name):
        return aliases.get(node.id, node.id)
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value, aliases)
        return f"{base}.{node.attr}" if base else ""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "getattr"
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    ):
        base = _dotted(node.args[0], aliases)
        return f"{base}.{node.args[1].value}" if base else ""
    return ""


def _root_name(node: ast.AST) -> str:
    while isinstance(node, (ast.Attribute, ast.Call)):
        if isinstance(node, ast.Call):
            if not (isinstance(node.func, ast.Name) and node.func.id == "getattr" and node.args):
                return ""
            node = node.args[0]
        else:
            node = node.value
    return node.id if isinstance(node, ast.Name) else ""


def _scan_native(file: str, text: str, forbidden: tuple[str, ...]) -> list[Finding]:
    out: list[Finding] = []
    code = _COMMENTS.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    task_tokens = {r for r in forbidden if "." not in r}  # dotted names are Python paths
    for number, line in enumerate(code.splitlines(), 1):
        if _STD_THREADS.search(line):
            out.append(Finding(file, number, "uses std::thread/async", False))
        for token in _IDENTIFIER.findall(line):
            if token in task_tokens:
                out.append(Finding(file, number, f"uses {token} (forbidden by the task)", True))
            elif token in HARNESS_TOKENS or token.lower().startswith(HARNESS_TOKEN_PREFIXES):
                out.append(Finding(file, number, f"uses {token}", False))
    return _unique(out)


def _unique(findings: list[Finding]) -> list[Finding]:
    seen, out = set(), []
    for f in findings:
        if (f.file, f.what) not in seen:
            seen.add((f.file, f.what))
            out.append(f)
    return out
