"""The one error type of the app. Every refusal becomes {"error": {type, message, line, hint}}."""

from __future__ import annotations


class AppError(Exception):
    """A failure the user can act on. `hint_key` names a hint in static/i18n/*.json."""

    status = 400
    type = "program_error"

    def __init__(
        self,
        message: str,
        *,
        line: int | None = None,
        hint_key: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.hint_key = hint_key
        # Set by run_program on failure: what the program built before it failed. It stays in
        # the worker; `partial` is the plain-data view of it that crosses to the server.
        self.execution: object = None
        self.partial: dict[str, object] | None = None

    def __reduce__(self) -> tuple[object, ...]:
        # Errors cross the pipe from a sandbox worker to the server, so they must pickle
        # with their keyword-only fields.
        return (_rebuild, (type(self), self.message, self.line, self.hint_key, self.partial))

    def to_plain(self) -> dict[str, object]:
        return {"type": self.type, "message": self.message, "line": self.line,
                "hint_key": self.hint_key}


def _rebuild(cls: type[AppError], message: str, line: int | None, hint_key: str | None,
             partial: dict[str, object] | None = None) -> AppError:
    error = cls(message, line=line, hint_key=hint_key)
    error.partial = partial
    return error


class ProgramError(AppError):
    """The learner's program raised (a Python or PyTorch error); the message is torch's own."""

    status = 400
    type = "program_error"


class Disallowed(AppError):
    """The program used syntax or a name that is not on the allow-list."""

    status = 400
    type = "disallowed"


class TooLarge(AppError):
    """A size limit: program, tensor, memory, integer, sequence, output or graph."""

    status = 413
    type = "too_large"


class Timeout(AppError):
    """The program ran past its step, CPU-time or wall-time budget."""

    status = 408
    type = "timeout"


class Busy(AppError):
    """Every sandbox worker stayed busy for longer than a request may queue."""

    status = 503
    type = "busy"
