"""Random programs never get past the runner's errors: no 5xx, no exception but an AppError.

Three kinds of program: random text, token soups (Python fragments, torch names, dunders,
numbers), and small valid-looking programs built from the allow-list's own names. The bulk
runs through run_program under tight limits (fast, in this process); a bounded number goes
through the endpoint. Derandomized and without a database, so every run tries the same ones.
"""

from __future__ import annotations

import string

from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.errors import AppError
from app.sandbox import allowlist as al
from app.sandbox.interpreter import run_program
from app.sandbox.limits import Limits

# Small enough that whatever a program does here stays cheap: it runs in the test process.
LIMITS = Limits(steps=5_000, tensor_numel=100_000, tensor_memory_bytes=64 << 20,
                int_bits=1_024, sequence_len=10_000, recursion=20, graph_nodes=500,
                stdout_bytes=10_000, wall_seconds=2.0, cpu_seconds=2.0)

FUZZ = settings(derandomize=True, database=None, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def _runs_or_refuses(code: str) -> None:
    """The program runs, or fails with an AppError that carries a message and maybe a line."""
    try:
        run_program(code, limits=LIMITS)
    except AppError as error:
        assert isinstance(error.message, str) and error.message
        assert error.line is None or isinstance(error.line, int)
    # Anything else propagates and fails the test: it would be a 500 from the worker.


# --- (a) random text -------------------------------------------------------------------------

_PYTHONISH = string.printable + "＿ｏｐｅｎ𝐞\u00a0\u200b\ud800\x00é中"


@settings(FUZZ, max_examples=500)
@given(st.text(alphabet=_PYTHONISH, max_size=120))
def test_random_text_only_ever_gets_an_app_error(code: str) -> None:
    _runs_or_refuses(code)


# --- (b) token soups -------------------------------------------------------------------------

_SYNTAX = """( ) [ ] { } : , . ; = += -= *= @= + - * ** / // % @ << >> & | ^ ~ < > <= >= == !=
not and or in is if else elif for while def class return lambda with as try except finally
import from pass break continue del assert yield global nonlocal raise async await match case
* ** -> :=""".split()
_NAMES = """x y i f g ctx torch nn F optim math print len range list dict set tuple sum max min
sorted str repr isinstance int float zip enumerate Exception RuntimeError None True False
open eval exec getattr type vars object super __import__ __class__ __bases__ __subclasses__
__globals__ __dict__ __builtins__ _private gi_frame grad grad_fn backward requires_grad data
numpy tolist item apply forward save_for_backward saved_tensors staticmethod
torch.ones torch.zeros torch.randn torch.tensor torch.arange torch.cat torch.load torch.save
torch.no_grad torch.autograd.Function torch.autograd.grad nn.Linear nn.Module F.relu
optim.SGD""".split()
_LITERALS = """0 1 2 3 -1 10 1.5 1e9 10**9 9**9**9 2**64 1<<100 'a' '{}' "%s" f'{x}' f'{x!r}'
f'{1:999999999}' [] () {} [0]*10**9 'a'*10**9 (1,) [1,2,3] {'a':1} requires_grad=True
dim=0 0.0 float('nan') -0.0 1j""".split()
_LAYOUT = ["\n", "\n    ", "\n        ", ":\n    ", " "]
_TOKENS = st.sampled_from(_SYNTAX + _NAMES + _LITERALS + _LAYOUT)


@settings(FUZZ, max_examples=800)
@given(st.lists(_TOKENS, max_size=30))
def test_token_soups_only_ever_get_an_app_error(tokens: list[str]) -> None:
    _runs_or_refuses(" ".join(tokens))


# --- (c) small programs from the allow-list's names ------------------------------------------

_VARIABLES = ["a", "b", "c"]
_NUMBER = st.sampled_from(["0", "1", "2", "3", "-1", "0.5", "2.0", "True"])
_SHAPE = st.lists(st.integers(0, 4).map(str), min_size=1, max_size=3).map(", ".join)


@st.composite
def _value(draw: st.DrawFn) -> str:
    """An expression: a variable, a number, or a tensor made by a factory."""
    kind = draw(st.sampled_from(["variable", "number", "factory", "tensor"]))
    if kind == "variable":
        return draw(st.sampled_from(_VARIABLES))
    if kind == "number":
        return draw(_NUMBER)
    if kind == "tensor":
        items = draw(st.lists(_NUMBER, min_size=1, max_size=4))
        return f"torch.tensor([{', '.join(items)}], requires_grad={draw(st.booleans())})"
    factory = draw(st.sampled_from(["ones", "zeros", "randn", "rand", "arange", "eye"]))
    grad = ", requires_grad=True" if factory in ("ones", "randn") and draw(st.booleans()) else ""
    return f"torch.{factory}({draw(_SHAPE)}{grad})"


@st.composite
def _expression(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["function", "method", "attribute", "binary", "layer", "call"]))
    args = ", ".join(draw(st.lists(_value(), max_size=2)))
    if kind == "function":
        return f"torch.{draw(st.sampled_from(sorted(al.TORCH_FUNCTIONS)))}({args})"
    if kind == "method":
        name = draw(st.sampled_from(sorted(al.TENSOR_ATTRIBUTES)))
        return f"({draw(_value())}).{name}({args})"
    if kind == "attribute":
        name = draw(st.sampled_from(sorted(al.TENSOR_ATTRIBUTES | al.NODE_ATTRIBUTES)))
        return f"({draw(_value())}).{name}"
    if kind == "binary":
        op = draw(st.sampled_from(["+", "-", "*", "/", "@", "**", "<", "==", "in"]))
        return f"{draw(_value())} {op} {draw(_value())}"
    if kind == "layer":
        layer = draw(st.sampled_from(sorted(al.NN_CLASSES)))
        sizes = ", ".join(draw(st.lists(st.integers(0, 4).map(str), max_size=2)))
        return f"nn.{layer}({sizes})({draw(_value())})"
    builtin = draw(st.sampled_from(["len", "sum", "max", "list", "sorted", "print", "str",
                                    "repr", "float", "int", "abs", "isinstance"]))
    return f"{builtin}({args})"


@st.composite
def _statement(draw: st.DrawFn, depth: int = 0) -> str:
    target = draw(st.sampled_from(_VARIABLES))
    kind = draw(st.sampled_from(["assign", "assign", "print", "backward", "block", "def"]))
    if kind == "assign" or depth > 0:
        return f"{target} = {draw(_expression())}"
    if kind == "print":
        return f"print({draw(_expression())})"
    if kind == "backward":
        return f"{target}.sum().backward()"
    if kind == "def":
        return f"def f(x):\n    return {draw(_expression())}\n{target} = f({draw(_value())})"
    header = draw(st.sampled_from(["with torch.no_grad():", "for i in range(3):", "if True:",
                                   "try:"]))
    body = "\n    ".join(draw(st.lists(_statement(depth + 1), min_size=1, max_size=3)))
    tail = "\nexcept RuntimeError:\n    pass" if header == "try:" else ""
    return f"{header}\n    {body}{tail}"


_PRELUDE = ("import torch\na = torch.randn(3, requires_grad=True)\nb = torch.ones(3)\n"
            "c = a * 2\n")
_PROGRAMS = st.lists(_statement(), min_size=1, max_size=6).map(
    lambda statements: _PRELUDE + "\n".join(statements) + "\n")


@settings(FUZZ, max_examples=1000)
@given(_PROGRAMS)
def test_small_allow_listed_programs_only_ever_get_an_app_error(code: str) -> None:
    _runs_or_refuses(code)


# --- through the endpoint ------------------------------------------------------------------


@settings(FUZZ, max_examples=60)
@given(st.one_of(_PROGRAMS, st.lists(_TOKENS, max_size=30).map(" ".join)))
def test_the_endpoint_never_answers_5xx(client: TestClient, code: str) -> None:
    response = client.post("/api/graph", json={"code": code})
    assert response.status_code < 500, (code, response.text)
    if response.status_code >= 400:
        error = response.json()["error"]
        assert error["type"] and error["message"], error
        assert error["hint_key"] != "hint.worker_crashed", (code, error)


def test_the_server_is_healthy_after_the_fuzzing(client: TestClient) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200 and response.json()["status"] == "ok"
