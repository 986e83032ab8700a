"""Predict, then reveal: the questions a page may ask, the answers they take, and their tally."""

from __future__ import annotations

import json
import math
import statistics
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace

from gradient_lab.errors import RequestInvalid, TooLarge
from gradient_lab.rooms.model import Question

# Every prompt a page may put to the class, with the params it fills in; the texts are
# room.q.* in static/i18n/*.json.
PROMPTS: dict[str, tuple[str, ...]] = {
    "room.q.grad": ("label",),       # graph lab: the gradient the next backward step sends
    "room.q.first": (),              # descent lab: which run reaches the minimum first
    "room.q.diverge": ("run",),      # descent lab: does this run's lr diverge
    "room.q.vanish": ("depth",),     # training lab: do the first layer's gradients vanish
    "room.q.explode": ("depth",),    # training lab: do they explode
    "room.q.nan": ("steps",),        # training lab: does the loss become NaN or inf
    "room.q.where": ("run", "steps"),  # descent lab: where this run is after so many steps
}
KINDS = ("number", "choice", "yesno", "point")
YES_NO = ("yes", "no")
BINS = 8  # a number question's histogram: one bar per value up to this many, else this many bins
# The largest size a number question's answers (its true one too) may have: far past any
# gradient a lesson shows, and far enough inside a float's range that the tally stays finite.
LARGEST = 1e15
# A tap on the plot is right this near the true point, as a share of the plot's width: the
# descent lab's own "reaches the minimum" (static/descent.js, questions).
NEAR = 0.05


@dataclass(frozen=True, slots=True)
class Bar:
    label: str
    count: int
    right: bool | None  # None until the answer is revealed


@dataclass(frozen=True, slots=True)
class Tap:
    x: float
    y: float
    distance: float | None  # to the true point, once revealed
    right: bool | None


@dataclass(frozen=True, slots=True)
class Taps:
    """A point question's answers: each tap (ordered by place, not by student), their median
    point, and how near the true one a tap must be to be right."""

    count: int
    median: tuple[float, float] | None
    near: float
    taps: list[Tap]


def check_address(address: str, limit: int) -> str:
    """The address a following page opens: a path on this server with its hash, within `limit`.
    Never another site's: "//evil.example" or "https://..." would send the class away."""
    if len(address.encode()) > limit:
        raise _too_large("address", len(address.encode()), limit)
    if not address.startswith("/") or address.startswith("//") or "\\" in address or \
            any(ord(c) < 0x20 for c in address):
        raise RequestInvalid(f"the address must be a path on this server, not {address[:80]!r}",
                             hint_key="hint.room_address")
    return address


def check_question(question: Question, limit: int) -> Question:
    """The question, its answer in canonical form, if it is one a page may ask within `limit`."""
    size = len(json.dumps([question.prompt, question.params, question.choices, question.answer]))
    if size > limit:
        raise _too_large("question", size, limit)
    if question.kind not in KINDS:
        raise RequestInvalid(f"unknown kind of question {question.kind!r}",
                             hint_key="hint.room_question")
    if question.prompt not in PROMPTS or set(question.params) != set(PROMPTS[question.prompt]):
        raise RequestInvalid(f"unknown prompt {question.prompt!r} with params "
                             f"{sorted(question.params)}", hint_key="hint.room_question")
    choices = YES_NO if question.kind == "yesno" else question.choices
    if question.kind == "choice" and (len(choices) < 2 or len(set(choices)) != len(choices)):
        raise RequestInvalid("a choice question needs two or more different choices",
                             hint_key="hint.room_question")
    if question.kind in ("number", "point") and choices:
        raise RequestInvalid(f"a {question.kind} question has no choices",
                             hint_key="hint.room_question")
    _check_plot(question)
    canonical = replace(question, choices=tuple(choices))
    if question.kind == "number":
        canonical = replace(canonical, low=None, high=None)
        truth = float(check_answer(canonical, question.answer))
        low, high = _range(truth, question.low, question.high)
        canonical = replace(canonical, low=low, high=high)
    elif question.low is not None or question.high is not None:
        raise RequestInvalid("only a number question has a range", hint_key="hint.room_question")
    return replace(canonical, answer=check_answer(canonical, question.answer))


def _check_plot(question: Question) -> None:
    """A point question, and only one, names the plot it was asked on: two ranges, each from
    low to high within ±LARGEST."""
    ranges = {"x": question.x_range, "y": question.y_range}
    if (question.kind == "point") != (None not in ranges.values()) or \
            list(ranges.values()).count(None) == 1:
        raise RequestInvalid("a point question, and only one, has the plot's x and y ranges",
                             hint_key="hint.room_question")
    for name, (low, high) in ((n, r) for n, r in ranges.items() if r is not None):
        if not -LARGEST <= low < high <= LARGEST:
            raise RequestInvalid(f"a point question's {name} range must run from low to high "
                                 f"within ±{LARGEST:g}, not {low:g} to {high:g}",
                                 hint_key="hint.room_question")


def _range(truth: float, low: float | None, high: float | None) -> tuple[float, float]:
    """A number question's range: the page's, or by default ±LARGEST (never one drawn from
    the true answer, whose size it would tell). It holds the true answer."""
    low = -LARGEST if low is None else low
    high = LARGEST if high is None else high
    if not (-LARGEST <= low < high <= LARGEST) or not low <= truth <= high:
        raise RequestInvalid(f"a number question's range must hold its answer {truth:g}, "
                             f"within ±{LARGEST:g}, not {low:g} to {high:g}",
                             hint_key="hint.room_question")
    return low, high


def check_answer(question: Question, value: str) -> str:
    """`value` as the question's canonical answer text: a number within the question's range
    ("14.0"), or one of its choices."""
    if question.kind == "point":
        return repr_point(_on_plot(question, value))
    if question.kind == "number":
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        low = -LARGEST if question.low is None else question.low
        high = LARGEST if question.high is None else question.high
        if not low <= number <= high:  # NaN too
            raise RequestInvalid(f"the answer must be a number from {low:g} to {high:g}, "
                                 f"not {value[:40]!r}", hint_key="hint.room_answer")
        return repr(number)
    if value not in question.choices:
        raise RequestInvalid(f"the answer must be one of {list(question.choices)}",
                             hint_key="hint.room_answer")
    return value


def _on_plot(question: Question, value: str) -> tuple[float, float]:
    """A point answer "x,y" that lies on the question's plot, as numbers."""
    (x0, x1), (y0, y1) = question.x_range or (0, 0), question.y_range or (0, 0)
    try:
        x, y = (float(part) for part in value.split(","))
    except ValueError:  # not two parts, or not numbers
        x = y = math.nan
    if not (x0 <= x <= x1 and y0 <= y <= y1):  # NaN too
        raise RequestInvalid(f"the answer must be a point x,y on the plot, x from {x0:g} to "
                             f"{x1:g} and y from {y0:g} to {y1:g}, not {value[:40]!r}",
                             hint_key="hint.room_point")
    return x, y


def repr_point(point: tuple[float, float]) -> str:
    return f"{point[0]!r},{point[1]!r}"


def _point(value: str) -> tuple[float, float]:
    x, y = value.split(",")
    return float(x), float(y)


def distance(question: Question, value: str) -> float:
    """How far a point answer lies from the true one, in the plot's units."""
    (x, y), (tx, ty) = _point(value), _point(question.answer)
    return math.hypot(x - tx, y - ty)


def is_right(question: Question, value: str) -> bool:
    """Whether an answer matches the true one: numbers within 1e-4, relative (absolute below
    1), as the graph lab's own "predict" check (static/graph/steps.js, matches); a point
    within NEAR of the plot's width."""
    if question.kind == "point":
        return distance(question, value) <= _near(question)
    if question.kind != "number":
        return value == question.answer
    got, want = float(value), float(question.answer)
    return abs(got - want) <= 1e-4 * max(1.0, abs(want))


def tally(question: Question, answers: Iterable[str]) -> list[Bar]:
    """The class's answers as bars: one per choice, or a histogram of the numbers."""
    values = list(answers)
    if question.kind == "point":
        return []  # taps() tells them
    if question.kind != "number":
        chosen = Counter(values)
        return [Bar(c, chosen[c], _right(question, c)) for c in question.choices]
    numbers = sorted(float(v) for v in values)
    distinct = sorted(set(numbers))
    if len(distinct) <= BINS:
        each = Counter(numbers)
        return [Bar(_fmt(x), each[x], _right(question, repr(x))) for x in distinct]
    low, high = distinct[0], distinct[-1]
    # In halves: high - low itself may pass the largest float (answers stored before ranges).
    half = high / 2 - low / 2
    counts = Counter(min(int((x / 2 - low / 2) / half * BINS), BINS - 1) for x in numbers)
    truth = float(question.answer)
    edges = [low * (1 - i / BINS) + high * (i / BINS) for i in range(BINS)] + [high]
    bars = []
    for i in range(BINS):
        start, end = edges[i], edges[i + 1]
        inside = start <= truth < end or (i == BINS - 1 and truth == end)
        bars.append(Bar(f"{_fmt(start)} – {_fmt(end)}", counts[i],
                        inside if question.revealed else None))
    return bars


def taps(question: Question, answers: Iterable[str]) -> Taps:
    """A point question's taps, with their distance to the true point once it is revealed."""
    points = sorted(_point(value) for value in answers)
    median = (statistics.median(x for x, _ in points),
              statistics.median(y for _, y in points)) if points else None
    shown = []
    for point in points:
        value = repr_point(point)
        far = distance(question, value) if question.revealed else None
        shown.append(Tap(point[0], point[1], far, _right(question, value)))
    return Taps(len(points), median, _near(question), shown)


def _near(question: Question) -> float:
    x0, x1 = question.x_range or (0, 0)
    return NEAR * (x1 - x0)


def _right(question: Question, value: str) -> bool | None:
    return is_right(question, value) if question.revealed else None


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def _too_large(what: str, size: int, limit: int) -> TooLarge:
    return TooLarge(f"the {what} is {size:,} bytes; a room's messages are at most {limit:,}",
                    hint_key="hint.room_message_too_large")
