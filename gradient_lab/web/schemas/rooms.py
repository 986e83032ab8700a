"""Class mode's requests and replies (gradient_lab/web/routes/rooms.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from gradient_lab.rooms.questions import KINDS, PROMPTS

if TYPE_CHECKING:
    Kind = str
    Prompt = str
else:
    Kind = Literal[KINDS]
    Prompt = Literal[tuple(PROMPTS)]

# A nickname is the only thing a student tells the room: short, optional, one line.
Nickname = Annotated[str, StringConstraints(strip_whitespace=True, max_length=24,
                                            pattern=r"^[^\x00-\x1f\x7f]*$")]
StudentId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{16}$")]
QuestionId = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{8}$")]
Text = Annotated[str, StringConstraints(min_length=1, max_length=80)]
Value = Annotated[str, StringConstraints(max_length=64)] | float


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Started(BaseModel):
    code: str = Field(description="The room's code, e.g. K7MXQ2PD.")
    shown: str = Field(description="The code as the projector shows it, e.g. K7MX-Q2PD.")
    link: str = Field(description="The page that joins the room: this server's /?join=CODE.")
    unreachable: Literal["loopback", "container"] | None = Field(
        default=None, description="Why no other device can open the link, if none can: the "
                                  "server listens only on loopback, or runs in a container "
                                  "(APP_PUBLIC_URL tells it the address to give).")


class Join(_Request):
    nickname: Nickname = ""
    student: StudentId | None = Field(
        default=None, description="The id this browser was given before: joining again keeps "
                                  "the same student (and their answer).")


class Joined(BaseModel):
    code: str
    shown: str
    student: str = Field(description="This student's id: it answers, and joins again, as them.")
    nickname: str


class Leave(_Request):
    student: StudentId


class Move(_Request):
    address: str = Field(description="The teacher's page: path and hash, e.g. /#ex=S2&step=3.")


class Ask(_Request):
    kind: Kind
    prompt: Prompt = Field(description="A string of static/i18n/*.json that asks it.")
    params: dict[Annotated[str, StringConstraints(max_length=16)], Text] = Field(
        default_factory=dict, max_length=4)
    choices: list[Text] = Field(default_factory=list, max_length=8,
                                description="A choice question's answers; none for the others.")
    answer: Value = Field(description="The true answer: a number, a choice, yes / no, or a "
                                      "point \"x,y\".")
    where: str = Field("", max_length=200, pattern=r"^(/[A-Za-z0-9_./-]*)?$",
                       description="The path of the lab it is asked on (/descent): students "
                                   "are asked only while the teacher is there.")
    low: float | None = Field(None, description="A number question's smallest answer "
                                                "(default -1e15).")
    high: float | None = Field(None, description="A number question's largest answer "
                                                 "(default 1e15).")
    x_range: tuple[float, float] | None = Field(
        None, description="A point question's plot, from left to right: its answers are "
                          "\"x,y\" within x_range and y_range.")
    y_range: tuple[float, float] | None = Field(
        None, description="A point question's plot, from bottom to top.")


class Asked(BaseModel):
    id: str


class Answer(_Request):
    student: StudentId
    question: QuestionId
    value: Value


class Empty(_Request):
    pass


class Done(BaseModel):
    """What an action answers: the room it changed (postJSON reads a JSON body back)."""

    code: str
