"""What torch calls do to shapes and dtypes, for the calls test code and wrappers make.

Each rule maps the shapes and dtypes of the arguments to those of the result; a call with no
rule raises CannotRead naming it, so the importer says which call it could not follow.
"""

from __future__ import annotations

import ast
import math
from typing import Any, Callable, Mapping, Sequence

from arena.importer.values import (
    CannotRead,
    DType,
    Module,
    Tensor,
    Unknown,
    as_int,
    as_shape,
    axis,
    broadcast,
    canonical_dtype,
    describe,
    is_float,
    promote,
    promote_scalar,
)

Args = Sequence[Any]
Kwargs = Mapping[str, Any]

_SAME = frozenset(
    "abs neg relu clamp clip clamp_min clamp_max sign floor ceil round trunc nan_to_num contiguous clone detach cpu "
    "cuda requires_grad_ fill_ zero_ copy_ add_ sub_ mul_ div_ clamp_ masked_fill masked_fill_ tril triu flip roll "
    "cumsum cumprod logical_not bitwise_not dropout normal_ uniform_".split()
)  # fmt: skip
_FLOATING = frozenset(
    "exp exp2 log log2 log1p expm1 sqrt rsqrt sigmoid tanh sin cos erf reciprocal silu gelu softplus mish elu "
    "leaky_relu softmax log_softmax normalize layer_norm rms_norm square".split()
)  # fmt: skip
_BINARY = frozenset(
    "add sub subtract mul multiply div divide true_divide maximum minimum pow remainder fmod bitwise_and "
    "bitwise_or bitwise_xor eq ne lt le gt ge logical_and logical_or atan2 hypot".split()
)  # fmt: skip
_REDUCTIONS = frozenset("sum mean prod amax amin max min argmax argmin any all norm std var logsumexp nansum".split())
_DTYPE_METHODS = {
    "float": "float32", "half": "float16", "bfloat16": "bfloat16", "double": "float64", "int": "int32",
    "long": "int64", "short": "int16", "bool": "bool", "byte": "uint8", "char": "int8",
}  # fmt: skip
_CREATE = frozenset("zeros ones empty randn rand".split())
_LIKE = frozenset("zeros_like ones_like empty_like randn_like rand_like full_like randint_like".split())


def dtype_kwarg(kwargs: Kwargs, default: str) -> str:
    value = kwargs.get("dtype")
    if value is None:
        return default
    if isinstance(value, DType):
        return value.name
    raise CannotRead(f"dtype= is {describe(value)}")


def binary(op: str, a: Any, b: Any) -> Any:
    """An arithmetic or comparison operator with at least one tensor."""
    shapes = [x.shape for x in (a, b) if isinstance(x, Tensor)]
    for x in (a, b):
        if isinstance(x, Unknown):
            raise x.fail()
        if not isinstance(x, (Tensor, int, float, bool)):
            raise CannotRead(f"{op} of a tensor and {describe(x)}")
    if op in ("eq", "ne", "lt", "le", "gt", "ge"):
        return Tensor(broadcast(*shapes), "bool")
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        dtype = promote(a.dtype, b.dtype)
    else:
        tensor, scalar = (a, b) if isinstance(a, Tensor) else (b, a)
        dtype = promote_scalar(tensor.dtype, scalar)
    if op in ("div", "divide", "true_divide") and not is_float(dtype):
        dtype = "float32"
    return Tensor(broadcast(*shapes), dtype)


def matmul(a: Tensor, b: Tensor) -> Tensor:
    if not a.shape or not b.shape:
        raise CannotRead("matmul of a 0-d tensor")
    left = a.shape if len(a.shape) > 1 else (1,) + a.shape
    right = b.shape if len(b.shape) > 1 else b.shape + (1,)
    if left[-1] != right[-2]:
        raise CannotRead(f"matmul of shapes {list(a.shape)} and {list(b.shape)}")
    shape = broadcast(left[:-2], right[:-2]) + (left[-2], right[-1])
    if len(a.shape) == 1:
        shape = shape[:-2] + shape[-1:]
    if len(b.shape) == 1:
        shape = shape[:-1]
    return Tensor(shape, promote(a.dtype, b.dtype))


def reduce(tensor: Tensor, name: str, args: Args, kwargs: Kwargs) -> Any:
    dim = kwargs.get("dim", args[0] if args else None)
    keepdim = bool(kwargs.get("keepdim", args[1] if len(args) > 1 else False))
    dtype = {"argmax": "int64", "argmin": "int64", "any": "bool", "all": "bool"}.get(name, tensor.dtype)
    if name in ("sum", "prod", "nansum") and not is_float(tensor.dtype):
        dtype = "int64"
    dtype = dtype_kwarg(kwargs, dtype)
    if dim is None:
        return Tensor((), dtype)
    dims = {axis(as_int(d, "dim"), len(tensor.shape)) for d in (dim if isinstance(dim, (tuple, list)) else (dim,))}
    shape = tuple(1 if i in dims else n for i, n in enumerate(tensor.shape) if keepdim or i not in dims)
    if name in ("max", "min"):  # with a dim: (values, indices)
        return (Tensor(shape, dtype), Tensor(shape, "int64"))
    return Tensor(shape, dtype)


def reshape(tensor: Tensor, sizes: tuple[int, ...]) -> Tensor:
    total = math.prod(tensor.shape)
    if sizes.count(-1) == 1:
        known = math.prod(n for n in sizes if n != -1)
        if known == 0 or total % known:
            raise CannotRead(f"cannot reshape {list(tensor.shape)} to {list(sizes)}")
        sizes = tuple(total // known if n == -1 else n for n in sizes)
    if math.prod(sizes) != total:
        raise CannotRead(f"cannot reshape {list(tensor.shape)} to {list(sizes)}")
    return Tensor(sizes, tensor.dtype)


def with_progression(tensor: Tensor, progression: tuple[int, int] | None) -> Tensor:
    """`tensor` holding the integer values start + step * i, where its dtype holds them all."""
    if progression is None or is_float(tensor.dtype) or tensor.dtype == "bool" or len(tensor.shape) > 1:
        return tensor
    start, step = progression
    last = start + step * max((tensor.shape or (1,))[0] - 1, 0)
    bits = _element_size(tensor.dtype) * 8
    low, high = (0, 2**bits - 1) if tensor.dtype.startswith("uint") else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    if not (low <= min(start, last) and max(start, last) <= high):
        return tensor
    return Tensor(tensor.shape, tensor.dtype, (start, step))


def progressed(op: type, left: Any, right: Any, result: Any) -> Any:
    """`result` of `left <op> right` (+, - or *) with its values, where one side is an integer
    arange and the other an int."""
    tensor, number = (left, right) if isinstance(left, Tensor) else (right, left)
    if not (isinstance(result, Tensor) and isinstance(tensor, Tensor) and tensor.progression is not None):
        return result
    if isinstance(number, bool) or not isinstance(number, int):
        return result
    start, step = tensor.progression
    if op is ast.Mult:
        return with_progression(result, (start * number, step * number))
    if op is ast.Add:
        return with_progression(result, (start + number, step))
    if op is ast.Sub:
        flipped = tensor is right  # c - t
        return with_progression(result, (number - start, -step) if flipped else (start - number, step))
    return result


def index_tensor(tensor: Tensor, index: Any) -> Tensor:
    """tensor[index] for ints, slices, None and one Ellipsis."""
    if tensor.progression is not None and len(tensor.shape) == 1 and type(index) is int:
        position = index + tensor.shape[0] if index < 0 else index
        if 0 <= position < tensor.shape[0]:  # one element of an arange: its value
            start, step = tensor.progression
            return Tensor((), tensor.dtype, (start + step * position, 0))
    items = list(index) if isinstance(index, tuple) else [index]
    if any(isinstance(item, Tensor) for item in items):
        raise CannotRead("indexing a tensor with a tensor")
    if items.count(Ellipsis) > 1:
        raise CannotRead("two Ellipses in one index")
    used = sum(1 for item in items if item is not None and item is not Ellipsis)
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items[at : at + 1] = [slice(None)] * (len(tensor.shape) - used)
    items += [slice(None)] * (len(tensor.shape) - sum(1 for item in items if item is not None))
    shape, source = [], iter(tensor.shape)
    for item in items:
        if item is None:
            shape.append(1)
            continue
        size = next(source, None)
        if size is None:
            raise CannotRead(f"too many indices for a tensor of shape {list(tensor.shape)}")
        if isinstance(item, slice):
            shape.append(len(range(*item.indices(size))))
        else:
            as_int(item, "an index")
    return Tensor(tuple(shape), tensor.dtype)


def tensor_attribute(tensor: Tensor, name: str) -> Any:
    if name == "shape":
        return tensor.shape
    if name == "dtype":
        return DType(tensor.dtype)
    if name == "ndim":
        return len(tensor.shape)
    if name in ("T", "mT"):
        return Tensor(tensor.shape[::-1] if name == "T" else tensor.shape[:-2] + tensor.shape[-2:][::-1], tensor.dtype)
    if name in ("device", "is_cuda", "data", "grad"):
        return Unknown(f"tensor.{name}")
    raise CannotRead(f"tensor attribute .{name}")


def call_method(tensor: Tensor, name: str, args: Args, kwargs: Kwargs) -> Any:
    """tensor.name(*args, **kwargs)."""
    if name in ("cumsum", "cumprod"):  # running sums: new values; an integer or bool tensor's are int64
        default = tensor.dtype if is_float(tensor.dtype) else "int64"
        return Tensor(tensor.shape, dtype_kwarg(kwargs, default))
    if name in _SAME:
        return tensor
    if name in _FLOATING:
        dtype = tensor.dtype if is_float(tensor.dtype) else "float32"
        return Tensor(tensor.shape, dtype_kwarg(kwargs, dtype))
    if name in _DTYPE_METHODS:
        return Tensor(tensor.shape, _DTYPE_METHODS[name])
    if name in _BINARY:
        return binary(name, tensor, args[0] if args else kwargs.get("other"))
    if name in _REDUCTIONS:
        return reduce(tensor, name, args, kwargs)
    rule = _METHODS.get(name)
    if rule is None:
        raise CannotRead(f"tensor method .{name}()")
    return rule(tensor, args, kwargs)


def _to(tensor: Tensor, args: Args, kwargs: Kwargs) -> Tensor:
    for value in (*args, *kwargs.values()):
        if isinstance(value, Unknown):  # maybe a dtype (`.to(mod._get_fp8_dtype())`): the result's is not known
            raise CannotRead(f".to() of a value not read ({value.reason})")
    for value in (*args, kwargs.get("dtype")):
        if isinstance(value, DType):
            return Tensor(tensor.shape, value.name)
        if isinstance(value, Tensor):
            return Tensor(tensor.shape, value.dtype)
    return tensor  # a device, or a string naming one


def _transpose(tensor: Tensor, args: Args, kwargs: Kwargs) -> Tensor:
    rank = len(tensor.shape)
    a, b = (axis(as_int(x, "dim"), rank) for x in (args[0], args[1]))
    shape = list(tensor.shape)
    shape[a], shape[b] = shape[b], shape[a]
    return Tensor(tuple(shape), tensor.dtype)


def _permute(tensor: Tensor, args: Args, kwargs: Kwargs) -> Tensor:
    order = [axis(d, len(tensor.shape)) for d in as_shape(tuple(args), "a permutation")]
    if sorted(order) != list(range(len(tensor.shape))):
        raise CannotRead(f"permute{tuple(order)} of a rank {len(tensor.shape)} tensor")
    return Tensor(tuple(tensor.shape[i] for i in order), tensor.dtype)


def _flatten(tensor: Tensor, args: Args, kwargs: Kwargs) -> Tensor:
    rank = len(tensor.shape)
    start = axis(as_int(kwargs.get("start_dim", args[0] if args else 0), "start_dim"), rank) if rank else 0
    end = axis(as_int(kwargs.get("end_dim", args[1] if len(args) > 1 else -1), "end_dim"), rank) if rank else 0
    shape = tensor.shape[:start] + (math.prod(tensor.shape[start : end + 1]),) + tensor.shape[end + 1 :]
    return Tensor(shape, tensor.dtype)


def _unsqueeze(tensor: Tensor, args: Args, kwargs: Kwargs) -> Tensor:
    at = as_int(args[0] if args else kwargs.get("dim"), "dim")
    at = at % (len(tensor.shape) + 1)
    return Tensor(tensor.shape[:at] + (1,) + tensor.shape[at:], tensor.dtype)


def _squeeze(tensor: Tensor, args: Args, kwargs: Kwargs) -> Tensor:
    if not args and "dim" not in kwargs:
        return Tensor(tuple(n for n in tensor.shape if n != 1), tensor.dtype)
    at = axis(as_int(args[0] if args else kwargs["dim"], "dim"), len(tensor.shape))
    return Tensor(tuple(n for i, n in enumerate(tensor.shape) if i != at or n != 1), tensor.dtype)


def _expand(tensor: Tensor, args: Args, kwargs: Kwargs) -> Tensor:
    sizes = as_shape(tuple(args), "a size")
    padded = (1,) * (len(sizes) - len(tensor.shape)) + tensor.shape
    return Tensor(tuple(old if new == -1 else new for old, new in zip(padded, sizes)), tensor.dtype)


def _gather(tensor: Tensor, args: Args, kwargs: Kwargs) -> Tensor:
    index = args[1] if len(args) > 1 else kwargs.get("index")
    if not isinstance(index, Tensor):
        raise CannotRead("gather without an index tensor")
    return Tensor(index.shape, tensor.dtype)


def _new_tensor(tensor: Tensor, args: Args, kwargs: Kwargs) -> Tensor:
    """tensor.new_zeros(size) and its kin, the size one sequence or the sizes one by one
    (`q.new_empty(n, b, t)`): the tensor's dtype unless dtype= says otherwise."""
    return Tensor(as_shape(tuple(args), "a size"), dtype_kwarg(kwargs, tensor.dtype))


def _new_full(tensor: Tensor, args: Args, kwargs: Kwargs) -> Tensor:
    """tensor.new_full(size, fill_value): the size is one sequence, the value after it."""
    return _new_tensor(tensor, tuple(args[:1]), kwargs)


def _topk(tensor: Tensor, args: Args, kwargs: Kwargs) -> tuple[Tensor, Tensor]:
    k = as_int(args[0] if args else kwargs.get("k"), "k")
    at = axis(as_int(kwargs.get("dim", args[1] if len(args) > 1 else -1), "dim"), len(tensor.shape))
    shape = tensor.shape[:at] + (k,) + tensor.shape[at + 1 :]
    return Tensor(shape, tensor.dtype), Tensor(shape, "int64")


def _size(tensor: Tensor, args: Args, kwargs: Kwargs) -> Any:
    if not args and "dim" not in kwargs:
        return tensor.shape
    return tensor.shape[axis(as_int(args[0] if args else kwargs["dim"], "dim"), len(tensor.shape))]


_METHODS: Mapping[str, Callable[[Tensor, Args, Kwargs], Any]] = {
    "to": _to,
    "type_as": lambda t, a, k: Tensor(t.shape, a[0].dtype) if a and isinstance(a[0], Tensor) else _to(t, a, k),
    "view": lambda t, a, k: _to(t, a, k) if a and isinstance(a[0], DType) else reshape(t, as_shape(tuple(a), "a size")),
    "reshape": lambda t, a, k: reshape(t, as_shape(tuple(a), "a size")),
    "view_as": lambda t, a, k: Tensor(a[0].shape, t.dtype),
    "reshape_as": lambda t, a, k: Tensor(a[0].shape, t.dtype),
    "expand_as": lambda t, a, k: Tensor(a[0].shape, t.dtype),
    "flatten": _flatten,
    "permute": _permute,
    "transpose": _transpose,
    "swapaxes": _transpose,
    "t": lambda t, a, k: Tensor(t.shape[::-1], t.dtype),
    "unsqueeze": _unsqueeze,
    "squeeze": _squeeze,
    "expand": _expand,
    "gather": _gather,
    "new_zeros": _new_tensor,
    "new_ones": _new_tensor,
    "new_empty": _new_tensor,
    "new_full": _new_full,
    "matmul": lambda t, a, k: matmul(t, a[0]),
    "topk": _topk,
    "sort": lambda t, a, k: (t, Tensor(t.shape, "int64")),
    "argsort": lambda t, a, k: Tensor(t.shape, "int64"),
    "size": _size,
    "dim": lambda t, a, k: len(t.shape),
    "numel": lambda t, a, k: math.prod(t.shape),
    "element_size": lambda t, a, k: _element_size(t.dtype),
    "item": lambda t, a, k: (
        t.progression[0] if t.progression is not None and not t.shape else Unknown("a tensor's value (.item())")
    ),
    "tolist": lambda t, a, k: Unknown("a tensor's values (.tolist())"),
    "stride": lambda t, a, k: Unknown("a tensor's strides"),
    "data_ptr": lambda t, a, k: Unknown("a tensor's address"),
}


def _element_size(dtype: str) -> int:
    for bits in (8, 16, 32, 64, 128):
        if dtype.endswith(str(bits)) or (bits == 8 and dtype.startswith("float8")):
            return bits // 8
    return 1  # bool


def call_torch(path: str, args: Args, kwargs: Kwargs) -> Any:
    """A call of torch.<name>, torch.nn.functional.<name> or triton.<name>."""
    name = path.rsplit(".", 1)[-1]
    if path in ("triton.cdiv", "math.ceil") or path.endswith("next_power_of_2") or path.startswith("math."):
        return _math(path, args)
    if not path.startswith("torch."):
        raise CannotRead(f"{path}()")
    tensors = [value for value in args if isinstance(value, Tensor)]
    if name in _CREATE:
        default = "float32"
        return Tensor(as_shape(tuple(args), "a size"), dtype_kwarg(kwargs, default))
    if name == "empty_strided":  # the strides place the elements; the shape and dtype are what the reading needs
        return Tensor(as_shape(tuple(args[:1]), "a size"), dtype_kwarg(kwargs, "float32"))
    if name == "full":
        fill = args[1] if len(args) > 1 else kwargs.get("fill_value")
        default = "bool" if isinstance(fill, bool) else "int64" if isinstance(fill, int) else "float32"
        return Tensor(as_shape(tuple(args[:1]), "a size"), dtype_kwarg(kwargs, default))
    if name == "randint":
        sizes = args[-1] if args else kwargs.get("size")
        return Tensor(as_shape((sizes,), "a size"), dtype_kwarg(kwargs, "int64"))
    if name == "randperm":
        count = as_number(args[0]) if len(args) == 1 else None
        if not isinstance(count, int) or isinstance(count, bool):
            raise CannotRead("torch.randperm without one integer bound")
        return Tensor((count,), dtype_kwarg(kwargs, "int64"))
    if name == "arange":
        numbers = [as_number(value) for value in args]
        length = len(range(*[int(n) for n in numbers])) if all(isinstance(n, int) for n in numbers) else None
        if length is None:
            raise CannotRead("torch.arange over non-integers")
        made = Tensor((length,), dtype_kwarg(kwargs, "int64"))
        start, step = (numbers[0] if len(numbers) > 1 else 0), (numbers[2] if len(numbers) > 2 else 1)
        return with_progression(made, (int(start), int(step)))
    if name in ("tensor", "as_tensor"):
        return literal_tensor(args[0] if args else kwargs.get("data"), kwargs)
    if name in _LIKE:
        return Tensor(args[0].shape, dtype_kwarg(kwargs, args[0].dtype))
    if name in ("matmul", "mm", "bmm"):
        return matmul(args[0], args[1])
    if name in ("cat", "concat", "stack"):
        return _join(name, args, kwargs)
    if name == "where" and len(args) == 3:
        values = [v for v in args[1:] if isinstance(v, Tensor)]
        dtype = promote(*(v.dtype for v in values)) if len(values) == 2 else (values[0].dtype if values else "float32")
        return Tensor(broadcast(*(t.shape for t in tensors)), dtype)
    if name == "linear":
        weight = args[1]
        return Tensor(args[0].shape[:-1] + weight.shape[:1], promote(args[0].dtype, weight.dtype))
    if tensors and (name in _SAME or name in _FLOATING or name in _BINARY or name in _REDUCTIONS or name in _METHODS):
        first = next(i for i, value in enumerate(args) if isinstance(value, Tensor))
        if name in _BINARY and len(args) >= 2:
            return binary(name, args[0], args[1])
        return call_method(args[first], name, list(args[first + 1 :]), kwargs)
    raise CannotRead(f"{path}()")


def literal_tensor(data: Any, kwargs: Kwargs) -> Tensor:
    """torch.tensor(data, dtype=...) of a (nested) list of numbers the reading knows: its shape,
    and its dtype (given, else torch's: bool, int64 or float32 by the values)."""
    shape: list[int] = []
    level: Any = data
    while isinstance(level, (list, tuple)):
        shape.append(len(level))
        if not level:
            break
        level = level[0]
    flat = _flat_numbers(data, tuple(shape))
    if flat is None:
        raise CannotRead(f"torch.tensor of {describe(data)}")
    if not flat or any(isinstance(v, float) for v in flat):
        default = "float32"
    else:
        default = "bool" if all(isinstance(v, bool) for v in flat) else "int64"
    return Tensor(tuple(shape), dtype_kwarg(kwargs, default))


def _flat_numbers(data: Any, shape: tuple[int, ...]) -> list[int | float | bool] | None:
    """The numbers of a rectangular nest of lists of `shape`, row-major; None for anything else."""
    if not shape:
        return [data] if isinstance(data, (int, float, bool)) else None
    if not isinstance(data, (list, tuple)) or len(data) != shape[0]:
        return None
    flat: list[int | float | bool] = []
    for item in data:
        inner = _flat_numbers(item, shape[1:])
        if inner is None:
            return None
        flat.extend(inner)
    return flat


def _join(name: str, args: Args, kwargs: Kwargs) -> Tensor:
    parts = args[0]
    if not isinstance(parts, (tuple, list)) or not parts or not all(isinstance(p, Tensor) for p in parts):
        raise CannotRead(f"torch.{name} of {describe(parts)}")
    dim = as_int(kwargs.get("dim", args[1] if len(args) > 1 else 0), "dim")
    first = parts[0]
    dtype = first.dtype
    for part in parts[1:]:
        dtype = promote(dtype, part.dtype)
    if name == "stack":
        at = dim % (len(first.shape) + 1)
        return Tensor(first.shape[:at] + (len(parts),) + first.shape[at:], dtype)
    at = axis(dim, len(first.shape))
    size = sum(part.shape[at] for part in parts)
    return Tensor(first.shape[:at] + (size,) + first.shape[at + 1 :], dtype)


def as_number(value: Any) -> int | float:
    if isinstance(value, Unknown):
        raise value.fail()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CannotRead(f"expected a number, got {describe(value)}")
    return value


def _math(path: str, args: Args) -> int | float:
    numbers = [as_number(value) for value in args]
    name = path.rsplit(".", 1)[-1]
    if name == "cdiv":
        return -(-int(numbers[0]) // int(numbers[1]))
    if name == "next_power_of_2":
        return 1 << max(int(numbers[0]) - 1, 0).bit_length()
    functions: Mapping[str, Callable[..., Any]] = {
        "ceil": math.ceil, "floor": math.floor, "sqrt": math.sqrt, "log2": math.log2, "prod": math.prod,
        "gcd": math.gcd, "exp": math.exp, "log": math.log,
    }  # fmt: skip
    if name not in functions:
        raise CannotRead(f"{path}()")
    return functions[name](*numbers)  # type: ignore[no-any-return]


def attribute_of_module(module: Module, name: str) -> Any:
    """torch.float16 is a dtype; anything else under a module is a module or function path."""
    if module.path == "torch" and name not in ("nn", "cuda", "testing", "linalg", "fft", "special"):
        try:
            return DType(canonical_dtype(name))
        except CannotRead:
            pass
    return Module(f"{module.path}.{name}")
