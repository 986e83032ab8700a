"""Size checks: integers, sequences, text, and tensors' element counts and broadcasts.

Each refuses, with TooLarge, a value or an operation before anything big is made. The
interpreter calls the Python-value checks as it goes; size_guard.py's SizeGuard calls the tensor
checks on every torch call a program makes.
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Iterable, Sequence

import numpy
import torch

from app.errors import Disallowed, TooLarge
from app.sandbox.limits import Limits

# --- Python values -----------------------------------------------------------------------------


def check_int(value: int, limits: Limits, line: int | None) -> int:
    if value.bit_length() > limits.int_bits:
        raise TooLarge(f"integer with {value.bit_length()} bits; the limit is {limits.int_bits}",
                       line=line, hint_key="hint.int_too_large")
    return value


def check_int_op(op: str, a: int, b: int, limits: Limits, line: int | None) -> None:
    """Refuse integer arithmetic whose result would be too big, before computing it."""
    bits = 0.0
    if op == "**" and b > 0 and abs(a) > 1:
        bits = b * math.log2(abs(a))
    elif op == "*":
        bits = a.bit_length() + b.bit_length()
    elif op == "<<" and b > 0:
        bits = a.bit_length() + b
    if bits > limits.int_bits:
        raise TooLarge(f"{a.bit_length()}-bit {op} would make an integer of about {bits:.3g} "
                       f"bits; the limit is {limits.int_bits}", line=line,
                       hint_key="hint.int_too_large")


def check_sequence(length: int, limits: Limits, line: int | None) -> None:
    if length > limits.sequence_len:
        raise TooLarge(f"a string or list of {length} items; the limit is {limits.sequence_len}",
                       line=line, hint_key="hint.sequence_too_large")


def check_sequence_op(op: str, a: object, b: object, limits: Limits, line: int | None) -> None:
    """Refuse repetition and concatenation of strings, lists, tuples and dicts past the limit."""
    seq = (str, list, tuple, bytes)
    if op == "*" and isinstance(a, seq) and isinstance(b, int):
        check_sequence(len(a) * max(b, 0), limits, line)
    elif op == "*" and isinstance(b, seq) and isinstance(a, int):
        check_sequence(len(b) * max(a, 0), limits, line)
    elif op in ("+", "|") and isinstance(a, (*seq, dict)) and isinstance(b, (*seq, dict, set)):
        check_sequence(len(a) + len(b), limits, line)


_SPEC_NUMBER = re.compile(r"\d+")
_WIDTH = 1000  # the widest field a format spec or str.ljust and its kin may make


def check_format_spec(spec: str, limits: Limits, line: int | None) -> None:
    """An f-string width or precision allocates that many characters: bound it."""
    for number in _SPEC_NUMBER.findall(spec):
        if len(number) > 6 or int(number) > _WIDTH:
            raise TooLarge(f"format width {number} is over {_WIDTH}", line=line,
                           hint_key="hint.sequence_too_large")


def check_width(width: int, line: int | None) -> None:
    """str.ljust, rjust, center and zfill make a string `width` long: bound it, as an
    f-string's width is (f"{s:<{width}}" makes the same string)."""
    if width > _WIDTH:
        digits = len(str(width))  # a program's int can have 1,200 digits: not in the message
        shown = f"{width:,}" if digits <= 12 else f"about 10**{digits - 1}"
        raise TooLarge(f"a string padded to width {shown}; the limit is {_WIDTH:,}", line=line,
                       hint_key="hint.sequence_too_large")


# A printf-style conversion: %, an optional (key), flags, width, .precision, length, type.
_PERCENT = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d*)(?:\.(\*|\d*))?[hlL]?.", re.DOTALL)


def check_percent_format(text: str, values: object, limits: Limits, line: int | None) -> None:
    """text % values makes the whole string at once, in C: bound each width and precision (as
    an f-string's), refuse '*' (a width taken from the values), and bound the total."""
    total = len(text) + text_size(values, limits.sequence_len)
    for width, precision in _PERCENT.findall(text):
        if "*" in (width, precision):
            raise Disallowed("a '*' width or precision is not allowed in % formatting; write "
                             "the number", line=line, hint_key="hint.disallowed_syntax")
        check_format_spec(f"{width}.{precision}", limits, line)
        total += int(width or 0) + int(precision or 0)
    check_sequence(total, limits, line)


def check_str_format(template: str, args: Sequence[object], kwargs: dict[str, object],
                     limits: Limits, line: int | None) -> None:
    """template.format(*args, **kwargs): each field may name an argument only ("{0.__class__}"
    and "{0[key]}" reach attributes and items, past the allow-list), its spec is bounded as an
    f-string's (no nested {width}), and so is the whole text, each value counted each time
    a field names it."""
    total, auto = len(template), 0
    try:
        fields = list(string.Formatter().parse(template))
    except ValueError:
        return  # str.format raises its own error for the malformed template
    for _, field, spec, _conversion in fields:
        if field is None:
            continue
        if field and not (field.isdigit() or field.isidentifier()) or field.startswith("_"):
            raise Disallowed(f"a format field names an argument, not its attributes or items: "
                             f"{{{field}}}", line=line, hint_key="hint.disallowed_syntax")
        if "{" in (spec or ""):
            raise Disallowed("a width or precision taken from an argument ({:{w}}) is not "
                             "allowed here; write the number", line=line,
                             hint_key="hint.disallowed_syntax")
        check_format_spec(spec or "", limits, line)
        if not field:
            field, auto = str(auto), auto + 1
        value = args[int(field)] if field.isdigit() and int(field) < len(args) else \
            kwargs.get(field, "")
        total += text_size(value, limits.sequence_len) + max(
            (int(n) for n in _SPEC_NUMBER.findall(spec or "")), default=0)
        check_sequence(total, limits, line)


# What repr writes out item by item, besides dicts: sequences, sets and a dict's views.
_ITERABLES: tuple[type[Iterable[object]], ...] = (
    list, tuple, set, frozenset, type({}.keys()), type({}.values()), type({}.items()))


def text_size(value: object, budget: int) -> int:
    """About how many characters str(value) makes, counted only up to budget.

    .. note:: `[s] * n` holds one string n times, and str() writes it n times, so the walk
       counts with repetition (as repr does) and stops once it passes the budget.
    """
    if type(value) is tuple and len(value) <= 16 \
            and not any(isinstance(item, _NESTED) for item in value):
        # print's arguments, most often a tensor or a string and a number: no walk needed.
        return 2 + 2 * len(value) + sum(map(_leaf_size, value))
    total = 0
    stack: list[tuple[object, bool]] = [(value, False)]
    inside: set[int] = set()  # containers on the current path: repr prints these as [...]
    while stack and total <= budget:
        item, leaving = stack.pop()
        if leaving:
            inside.discard(id(item))
        elif isinstance(item, BaseException):
            stack.append((item.args, False))  # str(KeyError(key)) is repr(key)
        elif isinstance(item, dict) or isinstance(item, _ITERABLES):
            if id(item) in inside:
                total += 5
                continue
            parts = [*item.keys(), *item.values()] if isinstance(item, dict) else list(item)
            total += 2 + 2 * len(parts)
            if total <= budget:
                inside.add(id(item))
                stack.append((item, True))
                stack.extend((part, False) for part in parts)
        else:
            total += _leaf_size(item)
    return total


_NESTED: tuple[type, ...] = (BaseException, dict, *_ITERABLES)  # what text_size walks into


def _leaf_size(item: object) -> int:
    if isinstance(item, str):
        return len(item) + 2
    if isinstance(item, (torch.Tensor, numpy.ndarray)):
        return 40 + 16 * _printed_elements(tuple(item.shape))
    if isinstance(item, int):
        return item.bit_length() * 3 // 10 + 2  # its decimal digits, and a sign
    return 24  # a float's repr, or an object's <name at 0x...>


def _printed_elements(shape: tuple[int, ...]) -> int:
    # torch and NumPy print every element up to 1000, and past that 3 from each end of each dim.
    numel = math.prod(shape)
    return numel if numel <= 1000 else math.prod(min(size, 6) for size in shape)


def check_text(value: object, limits: Limits, line: int | None) -> None:
    """Refuse str() of a value whose text would be longer than the sequence limit."""
    size = text_size(value, limits.sequence_len)
    if size > limits.sequence_len:
        raise TooLarge(f"the text of this value would be longer than {limits.sequence_len:,} "
                       "characters", line=line, hint_key="hint.sequence_too_large")


# --- tensors -----------------------------------------------------------------------------------


def check_numel(numel: int, what: str, limits: Limits, line: int | None) -> None:
    if numel > limits.tensor_numel:
        raise TooLarge(f"{what} would have {numel:,} elements; the limit is "
                       f"{limits.tensor_numel:,}", line=line, hint_key="hint.too_large")


def check_broadcast(tensors: Sequence[torch.Tensor], limits: Limits, line: int | None,
                    samples: int = 1) -> None:
    """Refuse an elementwise op whose broadcast result is too big: ones(n, 1) * ones(1, n)."""
    first = tensors[0].shape
    if all(t.shape == first for t in tensors):  # the common case: the result has that shape
        check_numel(math.prod(first) * samples, "the result", limits, line)
        return
    shape: list[int] = []
    for t in tensors:
        dims = list(t.shape)
        if len(dims) > len(shape):
            shape = [1] * (len(dims) - len(shape)) + shape
        offset = len(shape) - len(dims)
        for i, size in enumerate(dims):
            here = shape[offset + i]
            if size != here and 1 not in (size, here):
                return  # not broadcastable: torch raises its own error
            shape[offset + i] = max(size, here) if 0 not in (size, here) else 0
    check_numel(math.prod(shape) * samples, "the result", limits, line)


def nested_numel(data: object, limits: Limits, line: int | None) -> None:
    """torch.tensor([[0] * n] * n) is n² elements from a list of n: measure before converting."""
    numel, level = 1, data
    while isinstance(level, (list, tuple, range)):
        numel *= len(level)
        if not level:
            return
        level = level[0]
    if isinstance(level, torch.Tensor):
        numel *= level.numel()
    check_numel(numel, "torch.tensor(...)", limits, line)
