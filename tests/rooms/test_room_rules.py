"""Class mode's pure parts: codes, tokens, the guessing brake, questions, answers, the tally and
what each screen is sent."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from gradient_lab.errors import RequestInvalid, TooLarge
from gradient_lab.rooms import codes
from gradient_lab.rooms.errors import TooManyAttempts
from gradient_lab.rooms.guard import Attempts
from gradient_lab.rooms.model import Question, Room, Student
from gradient_lab.rooms.questions import (
    PROMPTS,
    check_address,
    check_answer,
    check_question,
    is_right,
    tally,
    taps,
)
from gradient_lab.rooms.store import dump_question, load_question
from gradient_lab.rooms.views import crowd_view, room_view
from tests.rooms.conftest import ROOT, strings


def _number(answer: str = "14.0", revealed: bool = False) -> Question:
    return Question("0000000a", "number", "room.q.grad", {"label": "∂loss/∂a"}, (), answer,
                    revealed)


def _point(answer: str = "1.0,0.5", revealed: bool = False) -> Question:
    """Where Adam is after 150 steps, asked on a plot 4 wide (x -2..2) and 3 high (y -1..2)."""
    return Question("0000000c", "point", "room.q.where", {"run": "Adam", "steps": "150"}, (),
                    answer, revealed, x_range=(-2.0, 2.0), y_range=(-1.0, 2.0))


def _choice(revealed: bool = False) -> Question:
    return Question("0000000b", "choice", "room.q.first", {}, ("sgd", "adam"), "adam", revealed)


def test_a_code_is_eight_symbols_of_crockfords_base32() -> None:
    made = {codes.new_code() for _ in range(1000)}
    assert len(made) == 1000
    assert all(re.fullmatch("[0-9A-HJKMNP-TV-Z]{8}", code) for code in made)


@pytest.mark.parametrize(("typed", "code"), [
    ("K7MXQ2PD", "K7MXQ2PD"), ("k7mx-q2pd", "K7MXQ2PD"), (" K7MX Q2PD ", "K7MXQ2PD"),
    ("KOMXQIPL", "K0MXQ1P1"),  # O, I and L read as the digits they look like
    ("K7MXQ2P", None), ("K7MXQ2PDX", None), ("K7MXQ2PU", None), ("../../etc", None)])
def test_a_typed_code_is_read_as_a_student_means_it(typed: str, code: str | None) -> None:
    assert codes.normalize(typed) == code


def test_the_store_keeps_only_the_hash_of_a_long_random_token() -> None:
    token = codes.new_token()
    assert len(token) >= 43 and token != codes.new_token()
    assert codes.token_hash(token) == codes.token_hash(token) != token
    assert len(codes.token_hash(token)) == 64


def test_an_address_that_keeps_missing_is_braked_for_the_window() -> None:
    attempts = Attempts(limit=3, window=60)
    for second in range(3):
        attempts.check("10.0.0.1", second)
        attempts.missed("10.0.0.1", second)
    with pytest.raises(TooManyAttempts, match="try again in 58 s"):
        attempts.check("10.0.0.1", 2.0)
    attempts.check("10.0.0.2", 2.0)  # another address is not braked
    attempts.check("10.0.0.1", 60.5)  # the first miss has left the window


def test_the_brake_forgets_the_least_recent_address_past_its_bound() -> None:
    attempts = Attempts(limit=1, window=60, addresses=2)
    for address in ("a", "b", "c"):
        attempts.missed(address, 0)
    attempts.check("a", 1)  # forgotten
    with pytest.raises(TooManyAttempts):
        attempts.check("c", 1)


@pytest.mark.parametrize("address", ["/", "/#ex=S2&step=3", "/descent#preset=ravine",
                                     "/training#lesson=nan&nan.cause=lr"])
def test_a_path_on_this_server_is_an_address(address: str) -> None:
    assert check_address(address, 4096) == address


@pytest.mark.parametrize("address", ["//evil.example/", "https://evil.example/", "evil.example",
                                     "/\\evil.example", "javascript:alert(1)", "/\nSet-Cookie:",
                                     ""])
def test_anything_but_a_path_on_this_server_is_refused(address: str) -> None:
    with pytest.raises(RequestInvalid) as refused:
        check_address(address, 4096)
    assert refused.value.hint_key == "hint.room_address"


def test_an_address_past_the_message_limit_is_too_large() -> None:
    with pytest.raises(TooLarge, match="4,097 bytes"):
        check_address("/#" + "x" * 4095, 4096)


def test_a_question_is_kept_with_its_answer_in_canonical_form() -> None:
    asked = check_question(_number("14"), 4096)
    assert asked.answer == "14.0"
    yesno = check_question(Question("q", "yesno", "room.q.diverge", {"run": "SGD"}, (), "yes"),
                           4096)
    assert yesno.choices == ("yes", "no")


@pytest.mark.parametrize("question", [
    replace(_number(), prompt="room.q.unknown"),
    replace(_number(), params={}),
    replace(_number(), params={"label": "a", "extra": "b"}),
    replace(_number(), kind="essay"),
    replace(_number(), choices=("1", "2")),
    replace(_number(), answer="fourteen"),
    replace(_number(), answer="nan"),
    replace(_choice(), choices=("adam",)),
    replace(_choice(), choices=("adam", "adam")),
    replace(_choice(), answer="rmsprop"),
])
def test_a_question_a_page_cannot_ask_is_refused(question: Question) -> None:
    with pytest.raises(RequestInvalid):
        check_question(question, 4096)


def test_a_question_past_the_message_limit_is_too_large() -> None:
    with pytest.raises(TooLarge) as refused:
        check_question(replace(_number(), params={"label": "∂" * 300}), 512)
    assert refused.value.hint_key == "hint.room_message_too_large"


def test_every_prompt_is_a_string_in_both_languages() -> None:
    for lang in ("en", "zh-CN"):
        texts = strings(lang)
        for key, params in PROMPTS.items():
            assert set(re.findall(r"\{(\w+)\}", texts[key])) == set(params), (lang, key)


def test_an_answer_is_a_finite_number_or_one_of_the_choices() -> None:
    assert check_answer(_number(), " 14 ") == "14.0"
    assert check_answer(_number(), "-1e-3") == "-0.001"
    assert check_answer(_choice(), "sgd") == "sgd"
    for value in ("inf", "1e999", "", "14; DROP TABLE"):
        with pytest.raises(RequestInvalid):
            check_answer(_number(), value)
    with pytest.raises(RequestInvalid):
        check_answer(_choice(), "SGD")


@pytest.mark.parametrize(("value", "right"), [
    ("14.0", True), ("14.001", True), ("14.002", False), ("-14.0", False)])
def test_a_number_is_right_within_the_graph_labs_own_tolerance(value: str, right: bool) -> None:
    assert is_right(_number("14.0"), value) is right


def test_a_choice_tally_counts_each_choice_in_order_and_marks_the_right_one_once_revealed(
        ) -> None:
    answers = ["adam", "sgd", "adam", "adam"]
    assert [(b.label, b.count, b.right) for b in tally(_choice(), answers)] == \
        [("sgd", 1, None), ("adam", 3, None)]
    assert [b.right for b in tally(_choice(revealed=True), answers)] == [False, True]


def test_a_few_numbers_get_a_bar_each() -> None:
    answers = ["14.0", "14.0", "7.0", "28.0", "14.0"]
    bars = tally(_number(revealed=True), answers)
    assert [(b.label, b.count, b.right) for b in bars] == \
        [("7", 1, False), ("14", 3, True), ("28", 1, False)]


def test_many_different_numbers_become_a_histogram_that_counts_each_once() -> None:
    answers = [f"{n}.0" for n in range(100)]
    bars = tally(_number("14.0", revealed=True), answers)
    assert len(bars) == 8 and sum(b.count for b in bars) == 100
    assert [b.right for b in bars] == [False, True] + [False] * 6  # 14 is in 12.38 – 24.75
    assert (bars[0].label, bars[-1].label) == ("0 – 12.38", "86.62 – 99")


def _room(question: Question | None) -> Room:
    students = (Student("a" * 16, "<img src=x onerror=f()>"), Student("b" * 16, ""))
    return Room("K7MXQ2PD", 3, 5, "/#ex=S2", question, students,
                {"a" * 16: "14.0", "b" * 16: "7.0"})


def test_no_screen_sees_the_answer_before_the_reveal() -> None:
    view = room_view(_room(_number()))
    assert view["question"]["answer"] is None  # type: ignore[index]
    assert "14.0" not in str(view)
    revealed = room_view(_room(_number(revealed=True)))
    assert revealed["question"]["answer"] == "14.0"  # type: ignore[index]


def test_the_teacher_sees_the_tally_live_and_the_class_once_revealed() -> None:
    open_ = _room(_number())
    assert crowd_view(open_, teacher=False) == {
        "students": 2, "answered": 2, "right": None, "bars": None, "taps": None,
        "nicknames": None}
    teacher = crowd_view(open_, teacher=True)
    assert teacher["bars"] == [{"label": "7", "count": 1, "right": None},
                               {"label": "14", "count": 1, "right": None}]
    assert teacher["nicknames"] == ["<img src=x onerror=f()>"]  # text: the page escapes it
    revealed = crowd_view(_room(_number(revealed=True)), teacher=False)
    assert revealed["right"] == 1 and revealed["bars"] is not None
    assert crowd_view(_room(None), teacher=True)["answered"] == 0


def test_a_question_asked_on_another_lab_is_neither_shown_nor_counted() -> None:
    asked_here = replace(_number(), where="/")
    assert room_view(_room(asked_here))["question"] is not None  # the room is at /#ex=S2
    moved = replace(_room(asked_here), address="/descent#preset=ravine")
    assert room_view(moved)["question"] is None
    assert crowd_view(moved, teacher=True) == {
        "students": 2, "answered": 0, "right": None, "bars": None, "taps": None,
        "nicknames": ["<img src=x onerror=f()>"]}
    back = replace(moved, address="/?lang=zh-CN#ex=S3")  # back on the lab: asked again
    assert room_view(back)["question"] is not None


def test_a_question_keeps_the_lab_it_was_asked_on_in_the_store() -> None:
    question = replace(_number(), where="/descent")
    assert load_question(dump_question(question), False) == question


def test_every_string_the_room_panel_names_exists_in_both_languages() -> None:
    named: set[str] = set()
    for path in ("static/room.js", "static/room/render.js", "templates/_room.html"):
        named |= set(re.findall(r"[\"'`](room\.[a-z_.]+)[\"'`]", (ROOT / path).read_text()))
    named -= {"room.js", "room.css"}  # the files' own names
    named |= {f"room.{kind}" for kind in ("yes", "no")}  # choiceText: room.${value}
    assert len(named) > 30
    for lang in ("en", "zh-CN"):
        assert named - set(strings(lang)) == set(), lang


def test_a_point_question_keeps_its_plot_and_its_answer_in_canonical_form() -> None:
    asked = check_question(_point("1,0.5"), 4096)
    assert (asked.answer, asked.x_range, asked.y_range) == ("1.0,0.5", (-2.0, 2.0), (-1.0, 2.0))
    assert load_question(dump_question(asked), False) == asked


@pytest.mark.parametrize("question", [
    replace(_point(), x_range=None, y_range=None),
    replace(_point(), y_range=None),
    replace(_point(), x_range=(2.0, -2.0)),
    replace(_point(), y_range=(0.0, 0.0)),
    replace(_point(), x_range=(-2.0, 1e16)),
    replace(_point(), choices=("1,1", "0,0")),
    replace(_point(), low=-1.0, high=1.0),
    replace(_point(), answer="3.0,0.5"),  # the truth off the plot
    replace(_point(), answer="1.0"),
    replace(_point(), params={"run": "Adam"}),
    replace(_number(), x_range=(-2.0, 2.0), y_range=(-1.0, 2.0)),
])
def test_a_point_question_a_page_cannot_ask_is_refused(question: Question) -> None:
    with pytest.raises(RequestInvalid) as refused:
        check_question(question, 4096)
    assert refused.value.hint_key in ("hint.room_question", "hint.room_point")


def test_a_point_answer_is_x_comma_y_on_the_plot() -> None:
    assert check_answer(_point(), " -0.5, 1e-3") == "-0.5,0.001"
    assert check_answer(_point(), "2,-1") == "2.0,-1.0"  # the plot's own corner
    for value in ("1", "1,2,3", "a,b", "", "nan,0", "inf,0", "2.01,0", "0,-1.5", "0;0"):
        with pytest.raises(RequestInvalid) as refused:
            check_answer(_point(), value)
        assert refused.value.hint_key == "hint.room_point", value
        assert "x from -2 to 2 and y from -1 to 2" in refused.value.message


@pytest.mark.parametrize(("value", "right"), [
    ("1.0,0.5", True), ("1.2,0.5", True), ("1.0,0.3", True),  # 0.2 = 5% of the width 4
    ("1.15,0.65", False), ("1.3,0.5", False), ("-1.0,0.5", False)])
def test_a_tap_is_right_within_five_percent_of_the_plots_width(value: str, right: bool) -> None:
    assert is_right(_point(), value) is right


def test_the_taps_give_their_count_median_and_once_revealed_each_distance() -> None:
    answers = ["1.0,0.5", "-1.0,0.5", "1.6,0.8"]
    open_ = taps(_point(), answers)
    assert (open_.count, open_.median, open_.near) == (3, (1.0, 0.5), pytest.approx(0.2))
    assert [(tap.x, tap.y, tap.distance, tap.right) for tap in open_.taps] == [
        (-1.0, 0.5, None, None), (1.0, 0.5, None, None), (1.6, 0.8, None, None)]
    revealed = taps(_point(revealed=True), answers)
    assert [(tap.distance, tap.right) for tap in revealed.taps] == [
        (2.0, False), (0.0, True), (pytest.approx(0.6708, abs=1e-4), False)]
    assert taps(_point(), []).median is None
    assert tally(_point(), answers) == []  # no bars: the taps tell it


def test_the_teacher_sees_the_taps_live_and_the_class_once_revealed() -> None:
    room = replace(_room(_point()), address="/descent#preset=ravine",
                   answers={"a" * 16: "1.0,0.5", "b" * 16: "-1.0,0.5"})
    view = room_view(room)["question"]
    assert view["answer"] is None and "1.0,0.5" not in str(view)  # type: ignore[index]
    assert (view["x_range"], view["y_range"]) == ((-2.0, 2.0), (-1.0, 2.0))  # type: ignore[index]
    assert crowd_view(room, teacher=False)["taps"] is None
    live = crowd_view(room, teacher=True)
    assert live["taps"] == {"count": 2, "median": (0.0, 0.5), "near": pytest.approx(0.2),
                            "taps": [{"x": -1.0, "y": 0.5, "distance": None, "right": None},
                                     {"x": 1.0, "y": 0.5, "distance": None, "right": None}]}
    assert (live["answered"], live["right"], live["bars"]) == (2, None, [])
    revealed = replace(room, question=_point(revealed=True))
    seen = crowd_view(revealed, teacher=False)
    assert seen["right"] == 1
    assert [tap["right"] for tap in seen["taps"]["taps"]] == [False, True]  # type: ignore[index]
    assert room_view(revealed)["question"]["answer"] == "1.0,0.5"  # type: ignore[index]
