"""The optimizers, schedulers and clips by name: torch.optim itself, as both labs use it.

OPTIMIZERS, SCHEDULERS and CLIPS are the registries the schemas take their names from. An
optimizer is one OptimizerKind: torch's class and preset, the options a learner may give it
and the rules across them (which the schemas check at the door), its labels, how its runs look
and its update rule. Beside the schedulers and clips, keyed by the same names: their options
and rules. A `Run` names one
optimizer with its settings; make_optimizer and make_scheduler build torch's own objects for
it. torch stays the last judge: whatever it raises over a learner's options, building or
stepping, is a RequestInvalid that names them (`refused`). The descent lab races runs
(gradient_lab.descent.race); the training lab trains one (gradient_lab.training).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.optim import SGD, Adagrad, Adam, AdamW, NAdam, Optimizer, RMSprop, lr_scheduler

from gradient_lab.errors import AppError, RequestInvalid

# Each scheduler with the defaults a race of `steps` steps from `lr` needs where torch has none.
_Defaults = Callable[[int, float], dict[str, object]]
SCHEDULERS: dict[str, tuple[type[Any], _Defaults]] = {
    "step": (lr_scheduler.StepLR, lambda steps, lr: {"step_size": max(1, steps // 4)}),
    "multistep": (lr_scheduler.MultiStepLR,
                  lambda steps, lr: {"milestones": [steps // 3, 2 * steps // 3]}),
    "exponential": (lr_scheduler.ExponentialLR, lambda steps, lr: {"gamma": 0.99}),
    "cosine": (lr_scheduler.CosineAnnealingLR, lambda steps, lr: {"T_max": steps}),
    "plateau": (lr_scheduler.ReduceLROnPlateau, lambda steps, lr: {}),
    "onecycle": (lr_scheduler.OneCycleLR, lambda steps, lr: {"max_lr": lr, "total_steps": steps}),
    "warmup": (lr_scheduler.LinearLR,
               lambda steps, lr: {"start_factor": 0.1, "total_iters": max(1, steps // 10)}),
}

CLIPS: dict[str, Callable[[list[torch.Tensor], float], object]] = {
    "norm": lambda params, m: torch.nn.utils.clip_grad_norm_(params, max_norm=m),
    "value": lambda params, m: torch.nn.utils.clip_grad_value_(params, clip_value=m),
}


@dataclass(frozen=True, slots=True)
class Option:
    """One keyword argument a learner may give torch, and the values torch takes for it.

    `kind` is float, int, bool or str (one of `choices`); numbers are finite. Bounds are
    inclusive (ge, le) or strict (gt, lt). `items` asks for exactly that many values (Adam's
    betas), `many` for a list of up to MAX_ITEMS, `per_group` for one value or a list with one
    per parameter group.
    """

    kind: type
    ge: float | None = None
    gt: float | None = None
    lt: float | None = None
    le: float | None = None
    choices: tuple[str, ...] = ()
    items: int | None = None
    many: bool = False
    per_group: bool = False
    required: bool = False


# torch refuses to scale a float32 tensor by a Python number past float32's range ("value
# cannot be converted to type float without overflow"), so what a step multiplies by stays in it.
FLOAT32_MAX = torch.finfo(torch.float32).max
MOST = 10**9  # a count (step_size, patience, a milestone) far past any run's steps
MAX_ITEMS = 64  # the longest list an option takes (milestones)
_SCALE = Option(float, ge=0, le=FLOAT32_MAX)
_FLAG = Option(bool)
_COUNT = Option(int, ge=1, le=MOST)
_GAMMA = Option(float, ge=0)  # multiplies the lr, a Python float: an lr past float32 diverges
# OneCycleLR writes these into SGD's momentum or Adam's beta1, which Adam keeps below 1.
_MOMENTUM = Option(float, ge=0, lt=1, per_group=True)

# torch takes any dampening; a step scales the gradient by 1 - dampening.
_SGD = {"momentum": _SCALE, "dampening": Option(float, ge=-FLOAT32_MAX, le=FLOAT32_MAX),
        "weight_decay": _SCALE, "nesterov": _FLAG, "maximize": _FLAG}
_ADAM = {"betas": Option(float, ge=0, lt=1, items=2), "eps": _SCALE, "weight_decay": _SCALE,
         "amsgrad": _FLAG, "maximize": _FLAG}
# How torch runs an update, not what it computes: capturable and fused fail on some devices,
# differentiable and foreach change nothing a learner sees. The lab decides them.
IMPLEMENTATION_FLAGS = ("foreach", "fused", "capturable", "differentiable")

SCHEDULER_OPTIONS: dict[str, dict[str, Option]] = {
    "step": {"step_size": _COUNT, "gamma": _GAMMA},
    "multistep": {"milestones": Option(int, ge=0, le=MOST, many=True), "gamma": _GAMMA},
    "exponential": {"gamma": _GAMMA},
    "cosine": {"T_max": _COUNT, "eta_min": Option(float, ge=0)},
    "plateau": {"mode": Option(str, choices=("min", "max")), "factor": Option(float, ge=0, lt=1),
                "patience": Option(int, ge=0, le=MOST), "threshold": Option(float, ge=0),
                "threshold_mode": Option(str, choices=("rel", "abs")),
                "cooldown": Option(int, ge=0, le=MOST),
                "min_lr": Option(float, ge=0, per_group=True), "eps": Option(float, ge=0)},
    "onecycle": {"max_lr": Option(float, gt=0, per_group=True), "total_steps": _COUNT,
                 "pct_start": Option(float, ge=0, le=1),
                 "anneal_strategy": Option(str, choices=("cos", "linear")),
                 "cycle_momentum": _FLAG, "base_momentum": _MOMENTUM, "max_momentum": _MOMENTUM,
                 "div_factor": Option(float, gt=0), "final_div_factor": Option(float, gt=0),
                 "three_phase": _FLAG},
    "warmup": {"start_factor": Option(float, gt=0, le=1), "end_factor": Option(float, ge=0, le=1),
               "total_iters": Option(int, ge=0, le=MOST)},
}

CLIP_OPTIONS: dict[str, dict[str, Option]] = {
    # Past float32's range the race clips at its largest value, which is no clipping at all.
    "norm": {"max": Option(float, gt=0, required=True)},
    "value": {"max": Option(float, gt=0, required=True)},
}


@dataclass(frozen=True, slots=True)
class Context:
    """Where options land: the optimizer, its parameter groups, the run's steps (None: unknown)."""

    optimizer: str
    groups: int = 1
    steps: int | None = None


@dataclass(frozen=True, slots=True)
class Rule:
    """A rule across options: `holds` them (the preset's in) where they land; `says` why not.

    `says` may name {optimizer} and {steps}.
    """

    names: tuple[str, ...]
    holds: Callable[[Mapping[str, Any], Context], bool]
    says: str


_NESTEROV = Rule(("nesterov", "momentum", "dampening"),
                 lambda o, s: not o.get("nesterov")
                 or (o.get("momentum", 0) > 0 and o.get("dampening", 0) == 0),
                 "nesterov needs momentum above 0 and dampening 0")


@dataclass(frozen=True, slots=True)
class OptimizerKind:
    """One optimizer the labs offer, declared once: everything else reads this entry.

    `cls(params, lr=..., **preset)` is torch's own optimizer. `options` are the keyword
    arguments a learner may give it and `rules` what torch refuses across them. `labels` name
    it in each page language; `color`, `symbol` (a Plotly marker) and `dash` are how its runs
    look on every plot (three cues, so that shape and dash tell runs apart where colour cannot).
    `rule` writes its update from a run's real settings (torch's `optimizer.defaults`).
    `lr_like` says which optimizer's lr on a surface suits it, times `lr_scale`, where the
    surface names no lr of its own for it.
    """

    cls: type[Optimizer]
    preset: dict[str, object]
    options: dict[str, Option]
    labels: dict[str, str]
    color: str
    symbol: str
    dash: str
    rule: Callable[[Mapping[str, Any]], str]
    rules: tuple[Rule, ...] = ()
    lr_like: str | None = None
    lr_scale: float = 1.0

    def defaults(self) -> dict[str, object]:
        """What a run takes when it gives nothing: torch's defaults for its options, the preset."""
        taken = inspect.signature(self.cls).parameters
        plain = {name: list(p.default) if isinstance(p.default, tuple) else p.default
                 for name, p in taken.items() if name in self.options or name == "lr"}
        return {**{k: v for k, v in plain.items() if isinstance(v, (bool, int, float, list))},
                **self.preset}


def _says(template: str) -> Callable[[Mapping[str, Any]], str]:
    """An update rule from a template over torch's settings: "{momentum}", "{betas[0]}"."""
    def rule(settings: Mapping[str, Any]) -> str:
        text = template.format(**settings)
        decay = settings.get("weight_decay", 0)
        return f"{text};  + λθ in g (λ = {decay})" if decay and "λ" not in template else text
    return rule


def _sgd_rule(settings: Mapping[str, Any]) -> str:
    # One class, three rules: what torch.optim.SGD does depends on momentum and nesterov.
    if not settings.get("momentum"):
        return _says("θ ← θ − lr·g")(settings)
    if settings.get("nesterov"):
        return _says("b ← μ·b + g;  θ ← θ − lr·(g + μ·b)   (μ = {momentum})")(settings)
    return _says("b ← μ·b + g;  θ ← θ − lr·b   (μ = {momentum})")(settings)


_ADAM_RULE = ("m ← β₁m + (1−β₁)g;  v ← β₂v + (1−β₂)g²;  θ ← θ − lr·m̂ / (√v̂ + ε)   "
              "(β₁ = {betas[0]}, β₂ = {betas[1]})")

# The palette is Okabe and Ito's (jfly.iam.u-tokyo.ac.jp/color, safe for every colour vision)
# without its yellow, which vanishes on a light surface, plus Paul Tol's wine (personal.sron.nl/
# ~pault, "muted"): eight colours, each with its own marker and dash, so that even two runs
# whose colours a reader cannot tell apart differ in shape and line.
OPTIMIZERS: dict[str, OptimizerKind] = {
    "sgd": OptimizerKind(SGD, {}, _SGD, {"en": "SGD", "zh-CN": "SGD"},
                         "#D55E00", "circle", "solid", _sgd_rule, (_NESTEROV,)),  # vermillion
    "momentum": OptimizerKind(SGD, {"momentum": 0.9}, _SGD,
                              {"en": "SGD + momentum", "zh-CN": "SGD + 动量"},
                              "#0072B2", "square", "solid", _sgd_rule, (_NESTEROV,)),  # blue
    "nesterov": OptimizerKind(SGD, {"momentum": 0.9, "nesterov": True}, _SGD,
                              {"en": "SGD + Nesterov", "zh-CN": "SGD + Nesterov"},
                              "#56B4E9", "diamond", "dash", _sgd_rule, (_NESTEROV,),
                              lr_like="momentum"),  # sky blue
    "adam": OptimizerKind(Adam, {}, {**_ADAM, "decoupled_weight_decay": _FLAG},
                          {"en": "Adam", "zh-CN": "Adam"},
                          "#009E73", "triangle-up", "solid", _says(_ADAM_RULE)),  # bluish green
    "adamw": OptimizerKind(AdamW, {}, _ADAM, {"en": "AdamW", "zh-CN": "AdamW"},
                           "#CC79A7", "triangle-down", "dash",  # reddish purple
                           _says("θ ← θ − lr·λ·θ (λ = {weight_decay}), then Adam's step: "
                                 + _ADAM_RULE), lr_like="adam"),
    "rmsprop": OptimizerKind(RMSprop, {}, {"alpha": _SCALE, "eps": _SCALE,
                                           "weight_decay": _SCALE, "momentum": _SCALE,
                                           "centered": _FLAG, "maximize": _FLAG},
                             {"en": "RMSprop", "zh-CN": "RMSprop"},
                             "#000000", "pentagon", "dashdot",  # black
                             _says("v ← αv + (1−α)g²;  θ ← θ − lr·g / (√v + ε)   (α = {alpha})"),
                             lr_like="adam"),
    "adagrad": OptimizerKind(Adagrad, {}, {"lr_decay": _SCALE, "weight_decay": _SCALE,
                                           "initial_accumulator_value": _SCALE, "eps": _SCALE,
                                           "maximize": _FLAG},
                             {"en": "Adagrad", "zh-CN": "Adagrad"},
                             "#E69F00", "star", "longdash",  # orange
                             _says("s ← s + g²;  θ ← θ − lr·g / (√s + ε)"),
                             lr_like="adam", lr_scale=10.0),
    "nadam": OptimizerKind(NAdam, {}, {**{k: v for k, v in _ADAM.items() if k != "amsgrad"},
                                       "momentum_decay": _SCALE, "decoupled_weight_decay": _FLAG},
                           {"en": "NAdam", "zh-CN": "NAdam"},
                           "#882255", "hexagon", "longdashdot",  # Tol's wine
                           _says("Adam with Nesterov's look-ahead on m:  θ ← θ − lr·(μₜ₊₁·m̂ + "
                                 "(1−μₜ)·ĝ) / (√v̂ + ε)   (β₁ = {betas[0]}, β₂ = {betas[1]})"),
                           lr_like="adam"),
}
# Views of the registry by name, for the schemas and the checks at the door.
OPTIMIZER_OPTIONS: dict[str, dict[str, Option]] = {n: k.options for n, k in OPTIMIZERS.items()}
OPTIMIZER_RULES: dict[str, tuple[Rule, ...]] = {n: k.rules for n, k in OPTIMIZERS.items()}


def update_rule(name: str, settings: Mapping[str, Any]) -> str:
    """Optimizer `name`'s update as the page writes it, with a run's real `settings`."""
    return OPTIMIZERS[name].rule(settings)


def _cycles_momentum(optimizer: str) -> bool:
    # OneCycleLR's own test: the optimizer's defaults hold momentum or betas.
    return bool({"momentum", "betas"} & set(OPTIMIZER_OPTIONS[optimizer]))


SCHEDULER_RULES: dict[str, tuple[Rule, ...]] = {
    "onecycle": (
        Rule(("cycle_momentum",),
             lambda o, s: not o.get("cycle_momentum", True) or _cycles_momentum(s.optimizer),
             "cycle_momentum (true unless set false) needs an optimizer with momentum or "
             "betas, which {optimizer} has not"),
        Rule(("total_steps",),
             lambda o, s: s.steps is None or o.get("total_steps", s.steps) >= s.steps,
             "total_steps must be at least the run's {steps} steps: torch refuses to step "
             "past it"),
    ),
}


def optimizer_conflicts(name: str, given: Mapping[str, object]) -> list[str]:
    """What torch would refuse across `given` options of optimizer `name`; one line each."""
    options = {**OPTIMIZERS[name].preset, **given}
    return _conflicts(OPTIMIZER_OPTIONS[name], OPTIMIZER_RULES.get(name, ()), options,
                      Context(name))


def scheduler_conflicts(kind: str, given: Mapping[str, object], context: Context) -> list[str]:
    """What torch would refuse across scheduler `kind`'s `given` options there; one line each."""
    return _conflicts(SCHEDULER_OPTIONS[kind], SCHEDULER_RULES.get(kind, ()), given, context)


def _conflicts(options: Mapping[str, Option], rules: tuple[Rule, ...],
               given: Mapping[str, Any], context: Context) -> list[str]:
    lines = [f"{name} has {len(value)} values, one per parameter group; there are "
             f"{context.groups}" for name, value in given.items()
             if name in options and options[name].per_group
             and isinstance(value, list | tuple) and len(value) != context.groups]
    for rule in rules:
        if not rule.holds(given, context):
            says = rule.says.format(optimizer=context.optimizer, steps=context.steps)
            got = _named({name: given[name] for name in rule.names if name in given})
            lines.append(f"{says} (got {got})" if got else says)
    return lines


@dataclass(frozen=True, slots=True)
class Run:
    """What one run asks for; `options` are torch.optim keyword arguments with torch's names."""

    optimizer: str
    lr: float | None = None
    options: Mapping[str, object] = field(default_factory=dict)
    scheduler: Mapping[str, object] | None = None  # {"kind": "step", **torch's arguments}
    clip: Mapping[str, object] | None = None  # {"kind": "norm" | "value", "max": m}
    lr_y: float | None = None  # a second parameter group: y gets its own lr (§4.3)
    label: str | None = None


def refused(what: str, options: Mapping[str, object], error: Exception) -> Exception:
    """torch's `error` over the learner's `options`, as the RequestInvalid that names them.

    .. note:: torch checks a few options when it builds an optimizer or scheduler and finds
       the rest wrong only while stepping (StepLR divides by step_size). A limit (an AppError)
       or a failing machine (memory, the accelerator) is no option's fault: it comes back as is.
    """
    if isinstance(error, AppError | MemoryError | torch.OutOfMemoryError | torch.AcceleratorError):
        return error
    named = _named(options)
    return RequestInvalid(f"{what}{f' with {named}' if named else ''}: "
                          f"{type(error).__name__}: {error}", hint_key="hint.request_invalid")


def _named(options: Mapping[str, object]) -> str:
    return ", ".join(f"{name}={value!r}" for name, value in options.items())


def _torch_call(what: str, fn: Callable[..., Any], first: object,
                kwargs: Mapping[str, object], named: Mapping[str, object]) -> Any:
    try:
        return fn(first, **kwargs)
    except Exception as error:  # noqa: BLE001 - torch refusing the options, whatever it raises
        raise refused(what, named, error) from None


def optimizer_options(run: Run) -> dict[str, object]:
    """torch.optim's keyword arguments for `run`: the preset, the learner's options, lr."""
    kwargs = {**OPTIMIZERS[run.optimizer].preset, **{k: tuple(v) if isinstance(v, list) else v
                           for k, v in run.options.items()}}
    if run.lr is not None:
        kwargs["lr"] = run.lr
    return kwargs


def named_options(run: Run) -> dict[str, object]:
    """What an error over `run`'s optimizer names: its options, and y's own lr when set."""
    return {**optimizer_options(run), **({} if run.lr_y is None else {"lr_y": run.lr_y})}


def make_optimizer(run: Run, params: list[torch.Tensor]) -> Optimizer:
    """torch.optim's optimizer for `run`: x and y in one group, or two when lr_y is set."""
    if run.optimizer not in OPTIMIZERS:
        raise RequestInvalid(f"unknown optimizer {run.optimizer!r}; the optimizers are "
                             f"{', '.join(OPTIMIZERS)}")
    cls = OPTIMIZERS[run.optimizer].cls
    groups: list[dict[str, Any]] = [{"params": params}]
    if run.lr_y is not None:
        groups = [{"params": [params[0]]}, {"params": [params[1]], "lr": run.lr_y}]
    return _torch_call(run.optimizer, cls, groups,  # type: ignore[no-any-return]
                       optimizer_options(run), named_options(run))


def make_scheduler(spec: Mapping[str, object] | None, optimizer: Optimizer,
                   steps: int) -> Any:
    """The lr scheduler `spec` names, over `optimizer`; None when there is none."""
    if spec is None:
        return None
    kind = str(spec.get("kind"))
    if kind not in SCHEDULERS:
        raise RequestInvalid(f"unknown scheduler {kind!r}; the schedulers are "
                             f"{', '.join(SCHEDULERS)}")
    cls, defaults = SCHEDULERS[kind]
    kwargs = {**defaults(steps, optimizer.param_groups[0]["lr"]), **scheduler_options(spec)}
    return _torch_call(f"scheduler {kind}", cls, optimizer, kwargs, kwargs)


def scheduler_options(spec: Mapping[str, object]) -> dict[str, object]:
    """The learner's own keyword arguments in a scheduler's `spec`."""
    return {k: v for k, v in spec.items() if k != "kind"}


def make_clip(spec: Mapping[str, object] | None) -> Callable[[list[torch.Tensor]], object] | None:
    """The clipping `spec` names, as a function of the params; None when there is none."""
    if spec is None:
        return None
    kind = str(spec.get("kind"))
    if kind not in CLIPS:
        raise RequestInvalid(f"unknown clip {kind!r}; the clips are {', '.join(CLIPS)}")
    limit = spec.get("max")
    if not isinstance(limit, (int, float)) or not limit > 0:
        raise RequestInvalid(f"clip {kind}: max must be a number above 0, got {limit!r}")
    clip, most = CLIPS[kind], min(float(limit), FLOAT32_MAX)  # past float32: no clipping

    def clip_grads(params: list[torch.Tensor]) -> object:
        try:
            return clip(params, most)
        except Exception as error:  # noqa: BLE001 - torch refusing the clip's max
            raise refused(f"clip {kind}", {"max": limit}, error) from None

    return clip_grads
