"""The one error type of the app. Every refusal becomes {"error": {type, message, line, hint}}."""

from __future__ import annotations

import re

from gradient_lab import i18n

_SURROGATE = re.compile("[\ud800-\udfff]")


class AppError(Exception):
    """A failure the user can act on. `hint_key` names a hint in static/i18n/*.json."""

    status = 400
    type = "program_error"
    # Whether the same request would meet it again, so that it may be kept (gradient_lab.kept):
    # the program's own error, yes; a time limit, a full queue or a failed child, no.
    repeatable = True

    def __init__(
        self,
        message: str,
        *,
        line: int | None = None,
        hint_key: str | None = None,
        repeatable: bool | None = None,
    ) -> None:
        # Half a surrogate pair (a program's own text) as U+FFFD: no writer of UTF-8 takes it.
        message = _SURROGATE.sub("\ufffd", message)
        super().__init__(message)
        self.message = message
        self.line = line
        self.hint_key = hint_key
        if repeatable is not None:  # only ever to say no: a kind that is never kept stays so
            self.repeatable = repeatable and type(self).repeatable
        # What a failed program built before its error, as plain data: the graph lab draws it.
        self.partial: dict[str, object] | None = None
        self.kept: str | None = None  # how a reply came: "ran", "shared" or "hit" (X-Kept)

    def to_plain(self) -> dict[str, object]:
        return {"type": self.type, "message": self.message, "line": self.line,
                "hint_key": self.hint_key}


class ProgramError(AppError):
    """The learner's program raised (a Python or PyTorch error); the message is torch's own."""

    status = 400
    type = "program_error"


class TooLarge(AppError):
    """A size limit: program, memory, output, graph, reply or request."""

    status = 413
    type = "too_large"


class Timeout(AppError):
    """The program ran past its CPU-time or wall-time budget."""

    status = 408
    type = "timeout"
    repeatable = False  # the machine's load decides it as much as the program


class RequestInvalid(AppError):
    """A request's option that torch refuses (an unknown keyword, a negative lr)."""

    status = 422
    type = "request_invalid"


class Forbidden(AppError):
    """A request from another site (its Origin), which the API does not serve."""

    status = 403
    type = "forbidden"


class UnsupportedMediaType(AppError):
    """A request body that is not JSON: the API reads nothing else."""

    status = 415
    type = "unsupported_media_type"


class HttpError(AppError):
    """Starlette's own refusals (404, 405, ...), in the app's envelope."""

    def __init__(self, status: int, type: str, message: str) -> None:
        super().__init__(message)
        self.status, self.type = status, type


class Busy(AppError):
    """Every place to run a program stayed taken for longer than a request may queue."""

    status = 503
    type = "busy"
    repeatable = False


class TooMany(AppError):
    """One client has as many programs in flight as it may: the next waits for one to end."""

    status = 429
    type = "too_many_programs"
    repeatable = False


class RunnerFailed(AppError):
    """A child answered with something other than its frames, or could not put its walls up."""

    status = 502
    type = "runner_failed"
    repeatable = False


# The kinds a child may report (gradient_lab/runner/frames.py): the server rebuilds each from its
# name, with the status the server gives it.
ERRORS: dict[str, type[AppError]] = {
    cls.type: cls for cls in (ProgramError, TooLarge, Timeout, RequestInvalid, RunnerFailed)
}


def envelope(error: AppError, lang: str) -> dict[str, object]:
    """The one error shape: {"error": {type, message, line, hint, hint_key}}, the hint in
    `lang`. A program that failed at run time also sends what it built before the error, as
    `partial` (the graph lab draws it beside the message)."""
    body: dict[str, object] = {"error": {
        **error.to_plain(), "hint": i18n.text(error.hint_key, lang) if error.hint_key else None}}
    if error.partial is not None:
        body["partial"] = error.partial
    return body
