"""Loss surfaces f(x, y): the built-in catalogue, the learner's own, and a grid of values.

A surface is a plain function of two tensors that broadcast, so one call evaluates a whole grid
or every run of a race at once. The learner's surface is their own code, run in a walled child
(`compile_expr`); the built-ins are torch expressions written here.
"""

from __future__ import annotations

import ast
import io
import math
import tokenize
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import torch

from gradient_lab.errors import ProgramError, TooLarge
from gradient_lab.optimizers import OPTIMIZERS
from gradient_lab.runner.child import hints
from gradient_lab.runner.child.program import FORMULA, Stop, error_line
from gradient_lab.runner.limits import Limits
from gradient_lab.tensors import Plain, to_plain

SurfaceFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]

# The tutorial's loops make tensors with torch's default dtype, so the surfaces use it too:
# a run that blows up reaches inf within a few hundred steps, as the learner's own loop would.
DTYPE = torch.float32


@dataclass(frozen=True, slots=True)
class Surface:
    """One catalogue entry; `fn(x, y, **params)` is the surface itself."""

    name: str
    formula: str
    latex: str
    fn: Callable[..., torch.Tensor] = field(repr=False)
    x_range: tuple[float, float]
    y_range: tuple[float, float]
    start: tuple[float, float]
    minima: tuple[tuple[float, float], ...]
    lrs: Mapping[str, float]  # the lrs it names: optimizer → an lr that makes a good race here
    steps: int  # a race's default length here
    params: Mapping[str, float] = field(default_factory=dict)

    @property
    def lr(self) -> dict[str, float]:
        """An lr for every optimizer: the surface's own, else the one its entry says it is like."""
        return {name: lr_on(self, name) for name in OPTIMIZERS}


def lr_on(surface: Surface, optimizer: str) -> float:
    """An lr that races `optimizer` well on `surface` (OptimizerKind.lr_like when unnamed)."""
    scale = 1.0
    name: str | None = optimizer
    while name is not None and name not in surface.lrs:
        kind = OPTIMIZERS[name]
        scale *= kind.lr_scale
        name = kind.lr_like
    if name is None:
        raise KeyError(f"surface {surface.name!r} has no lr for {optimizer!r} nor for the "
                       "optimizer it is like; name one in its lrs")
    return surface.lrs[name] * scale


@dataclass(frozen=True, slots=True)
class Grid:
    """z[i][j] = f(x[j], y[i]): rows follow y, columns follow x, as Plotly's contour expects."""

    x: Plain
    y: Plain
    z: Plain


def _quadratic(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x**2 + y**2


def _valley(x: torch.Tensor, y: torch.Tensor, condition: float = 20.0) -> torch.Tensor:
    # Curvatures 1 and `condition` along x and y: the condition number of the Hessian.
    return 0.5 * (x**2 + condition * y**2)


def _saddle(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x**2 - y**2


def _rosenbrock(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return (1 - x) ** 2 + 100 * (y - x**2) ** 2


def _beale(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return ((1.5 - x + x * y) ** 2 + (2.25 - x + x * y**2) ** 2
            + (2.625 - x + x * y**3) ** 2)


def _himmelblau(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return (x**2 + y - 11) ** 2 + (x + y**2 - 7) ** 2


def _rastrigin(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    tau = 2 * math.pi
    return 20 + x**2 - 10 * torch.cos(tau * x) + y**2 - 10 * torch.cos(tau * y)


def _ackley(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    # The 1e-12 keeps sqrt's gradient finite at the minimum itself (sqrt'(0) is inf, times 0 NaN).
    r = torch.sqrt(0.5 * (x**2 + y**2) + 1e-12)
    tau = 2 * math.pi
    return (-20 * torch.exp(-0.2 * r) - torch.exp(0.5 * (torch.cos(tau * x) + torch.cos(tau * y)))
            + math.e + 20)


def _booth(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return (x + 2 * y - 7) ** 2 + (2 * x + y - 5) ** 2


def _cliff(x: torch.Tensor, y: torch.Tensor, height: float = 50.0) -> torch.Tensor:
    # A gentle bowl with a sheer drop at x = -1: the slope there reaches height * 2.5, so one
    # plain SGD step off the edge throws the point far past the minimum (exploding gradient).
    return 0.05 * (x - 2) ** 2 + 0.5 * y**2 - height * torch.sigmoid(10 * (x + 1))


# Each surface's lrs name the optimizers that need one of their own here; the others take the
# lr of the optimizer their entry says they are like (OptimizerKind.lr_like). `steps` is how
# long a race here takes to show its point.
SURFACES: dict[str, Surface] = {s.name: s for s in (
    Surface("quadratic", "x**2 + y**2", r"x^2 + y^2", _quadratic,
            x_range=(-2, 2), y_range=(-2, 2), start=(-1.5, 1.8), minima=((0, 0),),
            lrs={"sgd": 0.1, "momentum": 0.05, "adam": 0.1}, steps=60),
    Surface("valley", "0.5 * (x**2 + condition * y**2)", r"\tfrac12\,(x^2 + \kappa\,y^2)",
            _valley, x_range=(-3, 3), y_range=(-2, 2), start=(-2.5, 1.5), minima=((0, 0),),
            lrs={"sgd": 0.09, "momentum": 0.02, "adam": 0.1}, steps=200,
            params={"condition": 20.0}),
    Surface("saddle", "x**2 - y**2", r"x^2 - y^2", _saddle,
            x_range=(-2, 2), y_range=(-2, 2), start=(-1.5, 0.01), minima=(),
            lrs={"sgd": 0.05, "momentum": 0.05, "adam": 0.05}, steps=100),
    Surface("rosenbrock", "(1 - x)**2 + 100 * (y - x**2)**2", r"(1-x)^2 + 100\,(y-x^2)^2",
            _rosenbrock, x_range=(-2, 2), y_range=(-1, 3), start=(-1.5, 2.0), minima=((1, 1),),
            lrs={"sgd": 0.001, "momentum": 0.0005, "adam": 0.05, "rmsprop": 0.01,
                 "adagrad": 0.5}, steps=1000),
    Surface("beale", "(1.5 - x + x*y)**2 + (2.25 - x + x*y**2)**2 + (2.625 - x + x*y**3)**2",
            r"(1.5-x+xy)^2 + (2.25-x+xy^2)^2 + (2.625-x+xy^3)^2", _beale,
            x_range=(-4.5, 4.5), y_range=(-4.5, 4.5), start=(1.0, 1.5), minima=((3, 0.5),),
            lrs={"sgd": 0.005, "momentum": 0.001, "adam": 0.05, "adagrad": 0.5}, steps=600),
    Surface("himmelblau", "(x**2 + y - 11)**2 + (x + y**2 - 7)**2",
            r"(x^2+y-11)^2 + (x+y^2-7)^2", _himmelblau,
            x_range=(-5, 5), y_range=(-5, 5), start=(0.0, 0.0),
            minima=((3, 2), (-2.805118, 3.131312), (-3.779310, -3.283186),
                    (3.584428, -1.848126)),
            lrs={"sgd": 0.01, "momentum": 0.002, "adam": 0.1, "adagrad": 1.0}, steps=300),
    Surface("rastrigin", "20 + x**2 - 10*cos(2*pi*x) + y**2 - 10*cos(2*pi*y)",
            r"20 + x^2 - 10\cos 2\pi x + y^2 - 10\cos 2\pi y", _rastrigin,
            x_range=(-5.12, 5.12), y_range=(-5.12, 5.12), start=(-3.2, 3.5), minima=((0, 0),),
            lrs={"sgd": 0.002, "momentum": 0.001, "adam": 0.1}, steps=300),
    Surface("ackley", "-20*exp(-0.2*sqrt(0.5*(x**2 + y**2))) "
            "- exp(0.5*(cos(2*pi*x) + cos(2*pi*y))) + e + 20",
            r"-20e^{-0.2\sqrt{(x^2+y^2)/2}} - e^{(\cos 2\pi x + \cos 2\pi y)/2} + e + 20",
            _ackley, x_range=(-5, 5), y_range=(-5, 5), start=(-3.5, 3.0), minima=((0, 0),),
            lrs={"sgd": 0.05, "momentum": 0.01, "adam": 0.1}, steps=300),
    Surface("booth", "(x + 2*y - 7)**2 + (2*x + y - 5)**2", r"(x+2y-7)^2 + (2x+y-5)^2", _booth,
            x_range=(-10, 10), y_range=(-10, 10), start=(-8.0, 8.0), minima=((1, 3),),
            lrs={"sgd": 0.05, "momentum": 0.01, "adam": 0.5, "adagrad": 5.0}, steps=400),
    Surface("cliff", "0.05*(x - 2)**2 + 0.5*y**2 - height*sigmoid(10*(x + 1))",
            r"0.05\,(x-2)^2 + \tfrac12 y^2 - h\,\sigma(10(x+1))", _cliff,
            x_range=(-4, 12), y_range=(-3, 3), start=(-3.5, 1.5), minima=((2, 0),),
            lrs={"sgd": 0.1, "momentum": 0.02, "adam": 0.1}, steps=150,
            params={"height": 50.0}),
)}


def surface_fn(name: str, params: Mapping[str, float] | None = None) -> SurfaceFn:
    """The built-in surface `name` with its parameters (the valley's condition number, ...)."""
    if name not in SURFACES:
        raise ProgramError(f"unknown surface {name!r}; the surfaces are {', '.join(SURFACES)}")
    surface = SURFACES[name]
    given = dict(params or {})
    unknown = set(given) - set(surface.params)
    if unknown:
        raise ProgramError(f"surface {name!r} has no parameter {sorted(unknown)[0]!r}; "
                           f"it takes {sorted(surface.params) or 'none'}")
    return partial(surface.fn, **{**surface.params, **given})


def compile_expr(text: str, limits: Limits) -> SurfaceFn:
    """The learner's surface as a function of two tensors: their text, run as Python.

    `text` is an expression in x and y (``x**2 + 3*y**2``) or a short program that sets
    ``loss`` (a line fit whose two parameters are x and y). It may use torch, math and the
    names a formula uses (FORMULA_NAMES: sin, exp, pi, ...); ``^`` reads as a power, as in a
    formula. It is written for one x and one y; torch.vmap maps it over a whole grid (or every
    run of a race) in one pass. Lines in errors are the learner's own.

    .. note:: Under vmap, Python control flow on a tensor (``if x > 0``) is an error;
       ``torch.where`` says the same thing and works.
    """
    size = len(text.encode(errors="surrogatepass"))
    if size > limits.program_bytes:
        raise TooLarge(f"the surface is {size:,} bytes; the limit is {limits.program_bytes:,}",
                       hint_key="hint.program_too_large")
    try:
        body = ast.parse(_powers(text), FORMULA).body
    except SyntaxError as error:
        raise ProgramError(f"SyntaxError: {error.msg}", line=error.lineno,
                           hint_key="hint.syntax_error") from None
    if len(body) == 1 and isinstance(body[0], ast.Expr):
        body = [ast.Return(body[0].value)]
    else:
        body = [*body, ast.Return(ast.Name("loss", ast.Load()))]
    arguments = ast.arguments(posonlyargs=[], args=[ast.arg("x"), ast.arg("y")],
                              kwonlyargs=[], kw_defaults=[], defaults=[])
    function = ast.FunctionDef("surface", arguments, body, [], lineno=1)
    module = ast.fix_missing_locations(ast.Module([function], type_ignores=[]))
    namespace: dict[str, Any] = dict(FORMULA_NAMES)
    exec(compile(module, FORMULA, "exec"), namespace)  # the learner's, inside the child's walls
    mapped = torch.vmap(namespace["surface"], randomness="same")

    def evaluate(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        xb, yb = torch.broadcast_tensors(x, y)
        try:
            z = mapped(xb.reshape(-1), yb.reshape(-1))
        except Stop:
            raise
        except NameError as exc:  # a name no formula has: say which names one may use
            raise ProgramError(f"NameError: {exc}", line=error_line(exc),
                               hint_key="hint.surface_names") from None
        except BaseException as exc:  # noqa: BLE001 - the learner's code failed: a 4xx
            raise hints.from_exception(exc, error_line(exc)) from None
        if not isinstance(z, torch.Tensor) or z.shape != xb.reshape(-1).shape:
            shape = tuple(z.shape[1:]) if isinstance(z, torch.Tensor) else type(z).__name__
            raise ProgramError(f"the surface must be one number for each x and y; it gave {shape}",
                               hint_key="hint.surface_scalar")
        return z.reshape(xb.shape).to(xb.dtype)

    return evaluate


# The names a surface's formula may use beside x and y: torch's functions, as the built-in
# surfaces write them, and the constants.
FORMULA_NAMES: dict[str, object] = {
    "torch": torch, "math": math, "pi": math.pi, "e": math.e,
    **{name: getattr(torch, name) for name in ("sin", "cos", "tan", "exp", "log", "sqrt",
                                               "tanh", "sigmoid", "abs")},
}


def _powers(text: str) -> str:
    """x^2 as a formula means it: each ^ becomes **, before Python parses it.

    .. note:: Rewriting the parse tree instead keeps Python's precedence, where ^ binds looser
       than +: x^2+y^2 would read as x**(2+y)**2.
    """
    if "^" not in text:
        return text
    try:
        carets = [tok.start for tok in tokenize.generate_tokens(io.StringIO(text).readline)
                  if tok.type == tokenize.OP and tok.string in ("^", "^=")]
    except (tokenize.TokenError, SyntaxError):
        return text  # Python's own parse says what is wrong with it
    lines = text.splitlines(keepends=True)
    for row, col in reversed(carets):  # from the end, so earlier columns stay where they were
        line = lines[row - 1]
        lines[row - 1] = line[:col] + "**" + line[col + 1:]
    return "".join(lines)


def evaluate(fn: SurfaceFn, x_range: tuple[float, float], y_range: tuple[float, float],
             resolution: int, *, max_numel: int, device: torch.device | None = None) -> Grid:
    """f on a resolution x resolution grid, in one vectorised call."""
    if resolution * resolution > max_numel:
        raise TooLarge(f"a {resolution}x{resolution} grid has {resolution**2} points; "
                       f"the limit is {max_numel}", hint_key="hint.too_large")
    xs = torch.linspace(*x_range, resolution, dtype=DTYPE, device=device)
    ys = torch.linspace(*y_range, resolution, dtype=DTYPE, device=device)
    gx, gy = torch.meshgrid(xs, ys, indexing="xy")  # gx[i][j] = xs[j], gy[i][j] = ys[i]
    with torch.no_grad():
        z = fn(gx, gy)
    return Grid(x=to_plain(xs, xs.numel()), y=to_plain(ys, ys.numel()), z=to_plain(z, z.numel()))


def resolve(name: str | None, expr: str | None, params: Mapping[str, float] | None,
            limits: Limits) -> SurfaceFn:
    """A built-in surface by name, or the learner's expression compiled as Python."""
    if expr is not None:
        return compile_expr(expr, limits)
    if name is None:
        raise ProgramError("give a surface: a name from the catalogue or an expression")
    return surface_fn(name, params)
