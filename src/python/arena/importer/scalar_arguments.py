"""A kernel function the test gives a list of numbers or a torch dtype (vLLM's
`mod.w8a8_block_int8_matmul(A, B, As, Bs, [block_n, block_k], output_dtype=torch.float16)`), read
through a function that takes the list's elements as separate arguments and passes the dtype as
the test does.

Arena's scalars are numbers, dims and flags: neither a list nor a dtype is one. The importer
appends to the copy of the kernel file (as it appends `<fn>_outputs`, arena.importer.returned_argument)
a function, the task's entry, that takes what the test passes less those arguments, each list's
elements in its place (`block_size_0, block_size_1`), and calls the kernel function with the list
built again from them and the dtype written as the test writes it:

    def w8a8_block_int8_matmul_scalars(A, B, As, Bs, block_size_0, block_size_1):
        return w8a8_block_int8_matmul(A, B, As, Bs, [block_size_0, block_size_1], output_dtype=torch.float16)

The test's call becomes a call of that function with the elements' own expressions, so each
element is read as any other scalar (a number the same in every case, a dim, a case value) and
refused as any other where it is not one. Only what is read exactly: a list or tuple display
without `*`; a name the case loop unpacks from TEST_SHAPES that is a list (or a tuple) of numbers
of one length in every case (vLLM's `triton_mrope`: `mrope_section`, read as `mrope_section[0]`,
...; the reference, which reads the list itself, binds it as a literal where it is one value in
every case and is refused otherwise); and a dtype written `torch.<dtype>` (one value in every
case). A list held by any other name and a kernel file that does not bind `torch` at its top
leave the call as it is (and its reading refuses it, with the reason).

Read from the loop followed once as it is (session 23), each argument's value in every case: a
dtype held by a name, one dtype in every case (`dtype = torch.float16`), passed as written; a bool
(not the same in every case) or a string, held by any name, as the index of the case's value
among the values the cases give, looked up again by the function (`causal=(False, True)[causal]`;
the reference looks it up alike); a tensor passed by keyword, taken by position; and a tensor that
is None in some cases (`b = torch.randn(N) if has_bias else None`, the loop's one assignment of the
name), drawn in every case and given where a 0/1 flag of the case says so (`bias=b if b_given else
None`; the reference gets None alike). A bool or string the case loop unpacks from each TEST_SHAPES
value is read so without following, and so, for a launch the test makes itself
(arena.importer.launch), is one a `parametrize` parameter holds (`type=type`). Also read from the
cases followed (session 25): None in every case, passed as written (vLLM's `triton_fused_moe_lora`
passes `sorted_token_ids=None`); and a list of tensors held by a name the loop binds once, to a list
or tuple display without `*` of that many tensors in every case (`lora_a = [torch.randn(...) * 0.1]`):
the statement is read as one assignment per element (`lora_a_0 = torch.randn(...) * 0.1`, then
`lora_a = [lora_a_0]`, the same values), each element an input the function takes by position, and
the function builds the list again (`[lora_a_stacked_0]`); the reference still reads `lora_a`.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
from typing import Any, Sequence

from arena.importer.correctness import TestLoop
from arena.importer.launch import Adapter, top_level_names
from arena.importer.values import DTYPE_ALIASES, DTYPE_NAMES, DType, Tensor


def as_separate_scalars(
    loop: TestLoop,
    function: ast.FunctionDef,
    kernel_file: str,
    kernel_tree: ast.Module,
    followed: Sequence[Sequence[Any]] | None = None,
) -> TestLoop:
    """`loop` whose kernel call passes its list and dtype arguments through an appended function
    (above), that function its adapter; `loop` unchanged where there are none, where it has an
    adapter already, or where what it passes is not read exactly. `followed`: each argument's value
    in each case (the call's positional arguments, then its keywords), where the loop was followed
    as it is: a bool or string held by any name, a tensor passed by keyword and a tensor that is None
    in some cases are read from them (below)."""
    if loop.adapter is not None and loop.adapter.file != kernel_file:  # the test's launch, a function
        return _launch_choices(loop)
    earlier = loop.adapter  # a function appended before (`<fn>_outputs`), which `function` is
    if (earlier is not None and earlier.function is not function) or not isinstance(loop.call, (ast.Assign, ast.Expr)):
        return loop
    call = loop.kernel_call
    if not isinstance(call.func, ast.Attribute) or any(isinstance(a, ast.Starred) for a in call.args):
        return loop
    if any(k.arg is None for k in call.keywords) or not _binds_torch(kernel_tree):
        return loop
    params = [a.arg for a in function.args.posonlyargs + function.args.args]
    if len(call.args) > len(params):
        return loop
    stored = _stored(loop)
    arguments = _read_arguments(loop, call, params, followed, stored)
    if not any(argument.read for argument in arguments):
        return loop
    entry = _Entry(taken=set(params) | {a.arg for a in function.args.kwonlyargs}, stored=stored)
    if not all(entry.add(argument) for argument in arguments):  # a name it would add is taken
        return loop
    adapter = _adapter(function, kernel_file, kernel_tree, entry, arguments)
    if earlier is not None:  # both appended, that one first
        adapter = dataclasses.replace(adapter, text=earlier.text + adapter.text)
    return _called_through(loop, call, adapter, entry)


@dataclasses.dataclass(frozen=True)
class _Argument:
    """One argument of the test's kernel call (`param`: the kernel function's parameter it fills)
    and what is read of it; None where that reading does not apply."""

    param: str
    node: ast.expr
    by_keyword: bool
    listed: Listed | None  # a list display, or a list the cases unpack: its elements
    dtype: str | None
    choice: tuple[bool | str, ...] | None  # a bool or string: the values the cases give
    tensor: bool | ast.Assign | None  # a tensor; its conditional draw where it is None in some cases
    tensor_list: tuple[ast.Assign, list[ast.expr]] | None  # `xs = [<draw>, ...]`, its elements
    none: bool  # None in every case followed

    @property
    def given(self) -> bool:
        """Given otherwise than as written: a tensor by keyword (taken by position), a list of
        tensors, a None, a tensor drawn in some cases."""
        by_keyword = self.by_keyword and self.tensor is not None
        return by_keyword or self.tensor_list is not None or self.none or isinstance(self.tensor, ast.Assign)

    @property
    def read(self) -> bool:
        """Read otherwise than as a plain scalar or tensor: it needs the appended function."""
        return self.listed is not None or self.dtype is not None or self.choice is not None or self.given


def _read_arguments(
    loop: TestLoop,
    call: ast.Call,
    params: list[str],
    followed: Sequence[Sequence[Any]] | None,
    stored: set[str],
) -> list[_Argument]:
    """The call's arguments, positional then keywords, each with what its node (and, where the loop
    was followed, its value in each case) says it is."""
    passed = [(params[i], arg, False) for i, arg in enumerate(call.args)]
    passed += [(str(k.arg), k.value, True) for k in call.keywords]
    per_case = list(followed) if followed is not None and len(followed) == len(passed) else None
    arguments = []
    for k, (param, node, by_keyword) in enumerate(passed):
        values = per_case[k] if per_case else None
        arguments.append(
            _Argument(
                param=param,
                node=node,
                by_keyword=by_keyword,
                listed=_listed(node) or _per_case(node, loop),
                dtype=_dtype(node) or (_followed_dtype(values) if values is not None else None),
                choice=_choice(node, loop) or (_followed_choice(values) if values is not None else None),
                tensor=_tensor_kind(values, node, loop) if values is not None else None,
                tensor_list=_tensor_list(values, node, loop, stored) if values is not None else None,
                none=all(v is None for v in values) if values is not None else False,
            )
        )
    return arguments


@dataclasses.dataclass
class _Entry:
    """The appended function, argument by argument: its parameters, what the test's call now
    gives them, and what it passes the kernel function; the loop's statements it rewrites."""

    taken: set[str]  # names its parameters may not take
    stored: set[str]  # names the loop binds
    positional: list[str] = dataclasses.field(default_factory=list)
    keyword_only: list[str] = dataclasses.field(default_factory=list)
    given_args: list[ast.expr] = dataclasses.field(default_factory=list)
    given_keywords: list[ast.keyword] = dataclasses.field(default_factory=list)
    passed_args: list[ast.expr] = dataclasses.field(default_factory=list)
    passed_keywords: list[ast.keyword] = dataclasses.field(default_factory=list)
    choices: list[tuple[str, str, tuple[bool | str, ...]]] = dataclasses.field(default_factory=list)
    optional: list[tuple[str, str]] = dataclasses.field(default_factory=list)  # (the test's name, its flag)
    drawn: dict[int, list[ast.stmt]] = dataclasses.field(default_factory=dict)  # id of a statement -> its rewrite

    def add(self, argument: _Argument) -> bool:
        """Take `argument` in; False where a name it needs is taken."""
        if argument.none:  # None in every case: passed as written
            self.pass_on(argument, ast.Constant(None))
            return True
        if argument.tensor_list is not None:
            return self.add_tensor_list(argument, argument.tensor_list)
        if argument.tensor is not None:
            return self.add_tensor(argument, argument.tensor)
        return self.add_scalar(argument)

    def pass_on(self, argument: _Argument, value: ast.expr) -> None:
        """What the appended function passes the kernel function for `argument`, as the test does."""
        if argument.by_keyword:
            self.passed_keywords.append(ast.keyword(argument.param, value))
        else:
            self.passed_args.append(value)

    def take(self, names: list[str]) -> bool:
        if set(names) & self.taken:
            return False
        self.taken |= set(names)
        return True

    def add_tensor_list(self, argument: _Argument, tensor_list: tuple[ast.Assign, list[ast.expr]]) -> bool:
        """`xs = [<draw>, ...]`: each element an input, the list built again."""
        assert isinstance(argument.node, ast.Name)
        assignment, elements = tensor_list
        element_params = [f"{argument.param}_{j}" for j in range(len(elements))]
        named = [f"{argument.node.id}_{j}" for j in range(len(elements))]
        if (set(element_params) | set(named)) & (self.taken | self.stored) or not self.take(element_params):
            return False
        self.drawn[id(assignment)] = _named_elements(assignment, named)
        self.positional += element_params
        self.given_args += [ast.Name(name, ast.Load()) for name in named]
        self.pass_on(
            argument, type(assignment.value)([ast.Name(name, ast.Load()) for name in element_params], ast.Load())
        )
        return True

    def add_tensor(self, argument: _Argument, tensor: bool | ast.Assign) -> bool:
        """A tensor: by position (the entry's inputs come first), passed on as the test passes it;
        one None in some cases drawn in every case, with a 0/1 flag saying whether it is given."""
        node = argument.node
        assert isinstance(node, ast.Name)
        passed: ast.expr = ast.Name(argument.param, ast.Load())
        self.positional.append(argument.param)
        self.given_args.append(node)
        if isinstance(tensor, ast.Assign):
            flag = f"{argument.param}_given"
            if not self.take([flag]):
                return False
            optional_draw = _optional_draw(tensor)
            assert optional_draw is not None  # _tensor_kind found it so
            draw, test = optional_draw
            self.drawn[id(tensor)] = [
                ast.fix_missing_locations(ast.copy_location(ast.Assign(tensor.targets, draw), tensor))
            ]
            self.keyword_only.append(flag)
            self.given_keywords.append(ast.keyword(flag, ast.IfExp(test, ast.Constant(1), ast.Constant(0))))
            passed = ast.IfExp(ast.Name(flag, ast.Load()), passed, ast.Constant(None))
            self.optional.append((node.id, flag))
        self.pass_on(argument, passed)
        return True

    def add_scalar(self, argument: _Argument) -> bool:
        """A dtype (as the test writes it), a bool or string (its index among the cases' values, or
        as written where it is one), a list (its elements, separate numbers), or any other value."""
        param, node, choice = argument.param, argument.node, argument.choice
        names: list[str] = []
        values: list[ast.expr] = []
        if argument.dtype is not None:
            passed: ast.expr = _torch_dtype(argument.dtype)
        elif choice is not None and len(choice) == 1:  # a string, the same in every case: as written
            passed = ast.Constant(choice[0])
        elif choice is not None:  # the index of the case's value, looked up by the entry
            names, values = [param], [_index_of(node, choice)]
            passed = ast.Subscript(_choices_display(choice), ast.Name(param, ast.Load()), ast.Load())
            if isinstance(node, ast.Name):
                self.choices.append((node.id, param, choice))
        elif argument.listed is not None:
            kind, values = argument.listed
            names = [f"{param}_{j}" for j in range(len(values))]
            if not self.take(names):
                return False
            passed = kind([ast.Name(name, ast.Load()) for name in names], ast.Load())
        else:
            names, values, passed = [param], [node], ast.Name(param, ast.Load())
        if argument.by_keyword:
            self.keyword_only += names
            self.given_keywords += [ast.keyword(name, value) for name, value in zip(names, values)]
        else:
            self.positional += names
            self.given_args += values
        self.pass_on(argument, passed)
        return True


def _called_through(loop: TestLoop, call: ast.Call, adapter: Adapter, entry: _Entry) -> TestLoop:
    """`loop` whose kernel call is now a call of `adapter` (`mod.<fn>_scalars`), given what `entry`
    says, and whose statements are the ones `entry` rewrote."""
    assert isinstance(call.func, ast.Attribute)
    called = ast.Attribute(call.func.value, adapter.function.name, ast.Load())
    value = ast.copy_location(ast.Call(called, entry.given_args, entry.given_keywords), call)
    statement: ast.Assign | ast.Expr = copy.copy(loop.call)
    statement.value = value
    statement = ast.fix_missing_locations(statement)
    statements = tuple(
        replaced
        for node in loop.statements
        for replaced in ([statement] if node is loop.call else entry.drawn.get(id(node), [node]))
    )
    return dataclasses.replace(
        loop,
        statements=statements,
        call=statement,
        adapter=adapter,
        choices=loop.choices + tuple(entry.choices),
        optional=loop.optional + tuple(entry.optional),
    )


def _launch_choices(loop: TestLoop) -> TestLoop:
    """`loop` whose call of the function written around the test's launch (arena.importer.launch)
    passes each bool or string that differs between cases (`type="pre_load"`) as its index among
    the cases' values, the function's first statements looking the value up again; `loop`
    unchanged where it passes none."""
    assert loop.adapter is not None
    call = loop.kernel_call
    if not isinstance(loop.call, ast.Expr) or call.args and not all(isinstance(a, ast.Name) for a in call.args):
        return loop
    keywords: list[ast.keyword] = []
    lookups: list[ast.stmt] = []
    choices: list[tuple[str, str, tuple[bool | str, ...]]] = []
    for keyword in call.keywords:
        choice = _choice(keyword.value, loop) if keyword.arg is not None else None
        if choice is None or len(choice) < 2:  # one string in every case is refused, as before
            keywords.append(keyword)
            continue
        assert isinstance(keyword.value, ast.Name) and keyword.arg is not None
        keywords.append(ast.keyword(keyword.arg, _index_of(keyword.value, choice)))
        lookup = ast.Subscript(_choices_display(choice), ast.Name(keyword.arg, ast.Load()), ast.Load())
        lookups.append(ast.Assign([ast.Name(keyword.arg, ast.Store())], lookup, lineno=0))
        choices.append((keyword.value.id, keyword.arg, choice))
    if not choices:
        return loop
    function = copy.deepcopy(loop.adapter.function)
    function.body = lookups + function.body
    function = ast.fix_missing_locations(function)
    old, new = ast.unparse(loop.adapter.function), ast.unparse(function)
    comment = (
        "# Looked up by `arena import aka`: a bool or string that differs between cases is given as the\n"
        "    # index of the case's value (arena's scalars are numbers); the test's statements follow."
    )
    first = new.splitlines()[0]
    text = loop.adapter.text.replace(old, new.replace(first, f"{first}\n    {comment}", 1))
    statement = copy.copy(loop.call)
    statement.value = ast.fix_missing_locations(ast.copy_location(ast.Call(call.func, call.args, keywords), call))
    statements = tuple(statement if node is loop.call else node for node in loop.statements)
    adapter = dataclasses.replace(loop.adapter, function=function, text=text)
    return dataclasses.replace(
        loop, statements=statements, call=statement, adapter=adapter, choices=loop.choices + tuple(choices)
    )


Listed = tuple[type[ast.List] | type[ast.Tuple], list[ast.expr]]  # the display's kind, and its elements


def _listed(node: ast.expr) -> Listed | None:
    """The elements of a list or tuple display without `*`; None for anything else."""
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts and not any(isinstance(e, ast.Starred) for e in node.elts):
        return type(node), list(node.elts)
    return None


def _per_case(node: ast.expr, loop: TestLoop) -> Listed | None:
    """`name[0], name[1], ...` for a name the case loop unpacks from each TEST_SHAPES value
    (`for i, (..., mrope_section) in enumerate(TEST_SHAPES)`) where it is a list (or a tuple) of
    numbers of one length in every case, and which nothing in the loop binds again; None otherwise."""
    if not isinstance(node, ast.Name) or not loop.shapes:
        return None
    values = [_unpacked(loop.target, shape, node.id) for shape in loop.shapes]
    sequences = [value for value in values if isinstance(value, (list, tuple))]
    kinds = {type(value) for value in sequences}
    if len(sequences) != len(values) or len(kinds) != 1 or len({len(value) for value in sequences}) != 1:
        return None
    numbers = all(isinstance(e, (int, float)) and not isinstance(e, bool) for value in sequences for e in value)
    stored = {
        n.id
        for s in (*loop.setup, *loop.statements)
        for n in ast.walk(s)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    if not numbers or not sequences[0] or node.id in stored:
        return None
    kind: type[ast.List] | type[ast.Tuple] = ast.List if kinds == {list} else ast.Tuple
    return kind, [
        ast.Subscript(ast.Name(node.id, ast.Load()), ast.Constant(j), ast.Load()) for j in range(len(sequences[0]))
    ]


def _choice(node: ast.expr, loop: TestLoop) -> tuple[bool | str, ...] | None:
    """The values, in the order the cases first give them, of a name the case loop unpacks from
    each TEST_SHAPES value that is a bool in every case and not the same one (`causal`), or a
    string in every case (`type="pre_load"`), and which nothing in the loop binds again; None
    otherwise (a bool the same in every case is a flag, passed as it is)."""
    if not isinstance(node, ast.Name) or not loop.shapes or node.id in _stored(loop):
        return None
    return _followed_choice([_unpacked(loop.target, shape, node.id) for shape in loop.shapes])


def _followed_choice(values: Sequence[Any]) -> tuple[bool | str, ...] | None:
    """The bools (not all the same) or the strings `values` holds, one per case, in the order they
    first come; None otherwise. As _choice's, or the values an argument has in the cases followed
    (a name bound inside the loop, `activation` from `TEST_CASES[case_idx]`)."""
    bools = [v for v in values if isinstance(v, bool)]
    strings = [v for v in values if isinstance(v, str)]
    if len(bools) == len(values) and len(set(bools)) > 1:
        return tuple(dict.fromkeys(bools))
    if strings and len(strings) == len(values):
        return tuple(dict.fromkeys(strings))
    return None


def _followed_dtype(values: Sequence[Any]) -> str | None:
    """The dtype's name where an argument is one torch dtype in every case followed (`dtype`, bound
    to `torch.float16` before the loop): passed as `torch.float16`, as the test's value."""
    names = {v.name for v in values if isinstance(v, DType)}
    return names.pop() if len(names) == 1 and all(isinstance(v, DType) for v in values) else None


def _tensor_kind(values: Sequence[Any], node: ast.expr, loop: TestLoop) -> bool | ast.Assign | None:
    """For an argument held by a name: True where it is a tensor in every case; where it is a
    tensor in some cases and None in the others, the loop's one assignment of the name, `b =
    <draw> if <test> else None` (or `None if <test> else <draw>`), the test's case values deciding;
    None for anything else."""
    if not isinstance(node, ast.Name) or not values:
        return None
    if all(isinstance(v, Tensor) for v in values):
        return True
    if not all(isinstance(v, Tensor) or v is None for v in values) or not any(v is None for v in values):
        return None
    assignments = [
        s
        for s in loop.statements
        if any(isinstance(n, ast.Name) and n.id == node.id and isinstance(n.ctx, ast.Store) for n in ast.walk(s))
    ]
    if len(assignments) != 1 or not isinstance(assignments[0], ast.Assign) or _optional_draw(assignments[0]) is None:
        return None
    return assignments[0]


def _tensor_list(
    values: Sequence[Any], node: ast.expr, loop: TestLoop, stored: set[str]
) -> tuple[ast.Assign, list[ast.expr]] | None:
    """For an argument held by a name that the loop binds once, to a list or tuple display without
    `*` (`lora_a = [torch.randn(...) * 0.1]`), a sequence of that many tensors in every case: the
    assignment and its elements; None for anything else."""
    if not isinstance(node, ast.Name) or not values or node.id not in stored:
        return None
    assignments = [
        s
        for s in (*loop.setup, *loop.statements)
        if any(isinstance(n, ast.Name) and n.id == node.id and isinstance(n.ctx, ast.Store) for n in ast.walk(s))
    ]
    if len(assignments) != 1 or assignments[0] not in loop.statements:
        return None
    statement = assignments[0]
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
        return None
    listed = _listed(statement.value)
    if not isinstance(statement.targets[0], ast.Name) or listed is None:
        return None
    elements = listed[1]
    if all(
        isinstance(v, (tuple, list)) and len(v) == len(elements) and all(isinstance(e, Tensor) for e in v)
        for v in values
    ):
        return statement, elements
    return None


def _named_elements(statement: ast.Assign, names: list[str]) -> list[ast.stmt]:
    """`xs = [a, b]` as `xs_0 = a`, `xs_1 = b`, `xs = [xs_0, xs_1]`: the same values, each element
    a name the kernel's call can give (and the reference still reads `xs`)."""
    assert isinstance(statement.value, (ast.List, ast.Tuple))
    each: list[ast.stmt] = [
        ast.Assign([ast.Name(name, ast.Store())], element) for name, element in zip(names, statement.value.elts)
    ]
    display = type(statement.value)([ast.Name(name, ast.Load()) for name in names], ast.Load())
    each.append(ast.Assign(statement.targets, display))
    return [ast.fix_missing_locations(ast.copy_location(node, statement)) for node in each]


def _optional_draw(statement: ast.Assign) -> tuple[ast.expr, ast.expr] | None:
    """(the draw, the test that gives it) of `name = <draw> if <test> else None`; `None if <test>
    else <draw>` gives `not <test>`."""
    value = statement.value
    if (
        len(statement.targets) != 1
        or not isinstance(statement.targets[0], ast.Name)
        or not isinstance(value, ast.IfExp)
    ):
        return None
    none_after, none_before = _is_none(value.orelse), _is_none(value.body)
    if none_after and not none_before:
        return value.body, value.test
    if none_before and not none_after:
        return value.orelse, ast.UnaryOp(ast.Not(), value.test)
    return None


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _index_of(node: ast.expr, choice: tuple[bool | str, ...]) -> ast.expr:
    """`0 if name == v0 else 1 if name == v1 else ... n - 1`: the case's value's index in `choice`."""
    index: ast.expr = ast.Constant(len(choice) - 1)
    for position in range(len(choice) - 2, -1, -1):
        test = ast.Compare(copy.deepcopy(node), [ast.Eq()], [ast.Constant(choice[position])])
        index = ast.IfExp(test, ast.Constant(position), index)
    return ast.copy_location(index, node)


def _choices_display(choice: tuple[bool | str, ...]) -> ast.expr:
    return ast.Tuple([ast.Constant(v) for v in choice], ast.Load())


def _stored(loop: TestLoop) -> set[str]:
    return {
        n.id
        for s in (*loop.setup, *loop.statements)
        for n in ast.walk(s)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }


def _unpacked(target: ast.expr, value: object, name: str) -> object:
    """What unpacking `value` into `target` binds to `name` (None where it binds nothing or
    where the value does not unpack so)."""
    if isinstance(target, ast.Name):
        return value if target.id == name else None
    if (
        isinstance(target, (ast.Tuple, ast.List))
        and isinstance(value, (tuple, list))
        and len(value) == len(target.elts)
    ):
        found = [_unpacked(t, v, name) for t, v in zip(target.elts, value)]
        return next((f for f in found if f is not None), None)
    return None


def _dtype(node: ast.expr) -> str | None:
    """The attribute name of `torch.<dtype>` (`float16`, `half`); None for anything else."""
    torch = isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "torch"
    if torch and isinstance(node, ast.Attribute) and (node.attr in DTYPE_NAMES or node.attr in DTYPE_ALIASES):
        return node.attr
    return None


def _torch_dtype(name: str) -> ast.expr:
    return ast.Attribute(ast.Name("torch", ast.Load()), name, ast.Load())


def _binds_torch(tree: ast.Module) -> bool:
    """Whether the kernel file's top binds `torch` to torch itself (`import torch`) and to nothing
    else, which the appended function's `torch.<dtype>` reads."""
    plain = False
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname == "torch" and alias.name != "torch":  # `import numpy as torch`
                    return False
                plain = plain or (alias.asname is None and alias.name.split(".")[0] == "torch")
        elif "torch" in top_level_names(ast.Module(body=[node], type_ignores=[])):
            return False
    return plain


def _adapter(
    function: ast.FunctionDef, kernel_file: str, kernel_tree: ast.Module, entry: _Entry, arguments: list[_Argument]
) -> Adapter:
    """The appended function `entry` describes, with the comment that says what it reads."""
    positional, keyword_only = entry.positional, entry.keyword_only
    # beyond lists and dtypes: say so
    read_more = bool(entry.choices or entry.optional or any(argument.given for argument in arguments))
    lists_of_tensors = any(argument.tensor_list is not None or argument.none for argument in arguments)
    name = f"{function.name}_scalars"
    while name in top_level_names(kernel_tree):
        name = f"arena_{name}"
    adapter = ast.parse(f"def {name}():\n    pass\n").body[0]
    assert isinstance(adapter, ast.FunctionDef)
    adapter.args = ast.arguments(
        posonlyargs=[],
        args=[ast.arg(p) for p in positional],
        vararg=None,
        kwonlyargs=[ast.arg(p) for p in keyword_only],
        kw_defaults=[None] * len(keyword_only),
        kwarg=None,
        defaults=[],
    )
    adapter.body = [ast.Return(ast.Call(ast.Name(function.name, ast.Load()), entry.passed_args, entry.passed_keywords))]
    adapter = ast.fix_missing_locations(ast.copy_location(adapter, function))
    comment = (
        (
            f"# Appended by `arena import aka`: `{function.name}` given a list's elements as separate numbers\n"
            "# and the test's dtype as the test writes it (arena's scalars are numbers); the task's entry."
        )
        if not read_more
        else (
            f"# Appended by `arena import aka`: `{function.name}` called as the test calls it, given what arena's\n"
            "# inputs and scalars hold: its tensors by position (with a 0/1 flag `<name>_given` where the test\n"
            "# gives None in some cases), a list's elements as separate numbers, a dtype as the test writes it,\n"
            "# a bool or string that differs between cases as the index of the case's value; the task's entry."
        )
    )
    if lists_of_tensors:
        comment += (
            "\n# A list of tensors is given as its elements, each an input, and built again; a None the test\n"
            "# gives in every case is passed as written."
        )
    return Adapter(file=kernel_file, function=adapter, text=f"\n\n{comment}\n{ast.unparse(adapter)}\n")
