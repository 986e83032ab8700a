"""Request and response models of /api/*: the contract, in one place."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Device = Literal["auto", "cpu", "cuda"]


class GraphRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    code: str = Field(description="The PyTorch program to run.")
    device: Device = Field("auto", description="Where to run it; auto picks CUDA when present.")


class VariableOut(BaseModel):
    value: Any = Field(description="A number, nested lists, or a summary for large tensors.")
    grad: Any
    requires_grad: bool
    is_leaf: bool
    grad_fn: str | None = Field(description="The grad_fn class name, e.g. MulBackward0.")
    shape: list[int]
    dtype: str
    line: int | None = Field(description="The line that produced this tensor.")


class GraphResponse(BaseModel):
    device: str
    stdout: str
    variables: dict[str, VariableOut]
