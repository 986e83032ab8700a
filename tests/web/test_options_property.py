"""Every optimizer × scheduler × clip, through the real endpoints, with random and boundary
options: zero, negative, huge, NaN and infinity as strings, wrong lengths, wrong types, names
torch does not take. Never a 5xx, and every refusal names an option the request gave.

The draws are bounded and derandomized (the same requests on every run); the options' names
and ranges come from the registries, so a new option is fuzzed at its edges the day it lands.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gradient_lab.optimizers import (
    CLIP_OPTIONS,
    CLIPS,
    FLOAT32_MAX,
    IMPLEMENTATION_FLAGS,
    MOST,
    OPTIMIZER_OPTIONS,
    OPTIMIZERS,
    SCHEDULER_OPTIONS,
    SCHEDULERS,
    Option,
)
from tests.helpers import assert_error


def _bounded(examples: int) -> settings:
    return settings(max_examples=examples, derandomize=True, database=None, deadline=None,
                    suppress_health_check=list(HealthCheck))


# What a careless or hostile client sends. JSON has no NaN or infinity, so they come as strings.
JUNK = st.sampled_from([0, -1, -0.5, 1.5, 1e308, -1e308, 2**63, "NaN", "Infinity", "-Infinity",
                        "abc", "", True, False, None, [], [0.9], [0.9, 0.999, 0.5], {"a": 1}])
# An lr torch takes, one that overflows a float32 step (Adam divides it by 1 - beta1), or,
# one time in twenty, zero, negative or junk.
LR = st.integers(0, 19).flatmap(lambda i: st.sampled_from([0.0, -0.1]) | JUNK if i == 0 else
                                st.sampled_from([1e-3, 0.05, 1.0, 3e38, FLOAT32_MAX, 1e300]))


def _bounds(option: Option) -> tuple[float, float]:
    low = option.ge if option.ge is not None else option.gt
    high = option.le if option.le is not None else option.lt
    return (low if low is not None else -1e308), (high if high is not None else 1e308)


def _inside(option: Option) -> st.SearchStrategy[Any]:
    """A value torch's range for `option` holds: on an inclusive bound, just inside a strict
    one, or between."""
    if option.choices:
        return st.sampled_from(option.choices)
    if option.kind is bool:
        return st.booleans()
    low, high = _bounds(option)
    if option.gt is not None:
        low = math.nextafter(low, math.inf)
    if option.lt is not None:
        high = math.nextafter(high, -math.inf)
    if option.kind is int:
        low, high = math.ceil(low), min(math.floor(high), MOST)
        return st.one_of(st.sampled_from([low, low + 1, 2, 3, 10, high]),
                         st.integers(low, min(high, low + 1_000)))
    near = [low, high, *(v for v in (0.0, 1e-8, 0.5, 1.0) if low <= v <= high)]
    return st.one_of(st.sampled_from(near), st.floats(low, high))


def _outside(option: Option) -> st.SearchStrategy[Any]:
    """A value just past `option`'s range, a choice misspelt, or junk."""
    low, high = _bounds(option)
    if option.choices:
        past: list[Any] = [option.choices[0].upper()]
    elif option.kind is int:
        past = [int(low) - 1, min(int(high), MOST) + 1]
    elif option.kind is float:
        past = [math.nextafter(low, -math.inf) if option.gt is None else low,
                math.nextafter(high, math.inf) if option.lt is None else high]
    else:
        past = ["yes", 1]
    return st.one_of(st.sampled_from(past), JUNK)


def _value(option: Option) -> st.SearchStrategy[Any]:
    """A value of `option` in its shape (a pair, a list, one per group); past its range, or
    of the wrong shape, one time in twenty."""
    one = _inside(option)
    if option.items is not None:
        shaped: st.SearchStrategy[Any] = st.lists(one, min_size=option.items,
                                                  max_size=option.items)
    elif option.many:
        shaped = st.lists(one, max_size=4)
    elif option.per_group:
        shaped = st.one_of(one, one, st.lists(one, min_size=1, max_size=2))
    else:
        shaped = one
    return st.integers(0, 19).flatmap(lambda i: _outside(option) if i == 0 else shaped)


@st.composite
def _options(draw: st.DrawFn, registry: dict[str, Option], strangers: list[str],
             always: tuple[str, ...] = ()) -> dict[str, Any]:
    """Up to three of the registry's options; now and then a name torch does not take here."""
    names = draw(st.lists(st.sampled_from(sorted(registry)), unique=True, max_size=3))
    names = [*names, *(name for name in always if name not in names)]
    options = {name: draw(_value(registry[name])) for name in names}
    if draw(st.integers(0, 19)) == 0:
        options[draw(st.sampled_from(strangers))] = draw(JUNK)
    return options


def _names_one(message: str, given: set[str]) -> bool:
    return any(re.search(rf"(?<!\w){re.escape(name)}(?!\w)", message) for name in given)


def _assert_fine_or_named(response: httpx.Response, given: set[str]) -> None:
    assert response.status_code < 500, response.text
    if response.status_code != 200:
        error = assert_error(response, 422, "request_invalid")
        assert _names_one(str(error["message"]), given), (error["message"], sorted(given))


def test_every_optimizer_scheduler_and_clip_races_with_torchs_defaults(
        client: TestClient) -> None:
    runs = [{"optimizer": optimizer,
             **({} if scheduler is None else {"scheduler": {
                 "kind": scheduler,
                 # adagrad has no momentum for OneCycleLR to cycle (the property below checks
                 # that the default is refused by name)
                 **({"cycle_momentum": False}
                    if (optimizer, scheduler) == ("adagrad", "onecycle") else {})}}),
             **({} if clip is None else {"clip": {"kind": clip, "max": 1.0}})}
            for optimizer in OPTIMIZERS for scheduler in [None, *SCHEDULERS]
            for clip in [None, *CLIPS]]
    assert len(runs) == len(OPTIMIZERS) * (len(SCHEDULERS) + 1) * (len(CLIPS) + 1)
    for i in range(0, len(runs), 12):  # a race takes at most 12 runs
        response = client.post("/api/descent", json={
            "surface": "rosenbrock", "start": [-1.5, 2.0], "steps": 20, "runs": runs[i:i + 12]})
        assert response.status_code == 200, response.text
        assert len(response.json()["runs"]) == len(runs[i:i + 12])


@pytest.mark.parametrize("optimizer", list(OPTIMIZERS))
@_bounded(30)
@given(data=st.data())
def test_a_race_with_any_options_runs_or_names_the_option_it_refuses(
        client: TestClient, optimizer: str, data: st.DataObject) -> None:
    run: dict[str, Any] = {"optimizer": optimizer, **data.draw(_options(
        OPTIMIZER_OPTIONS[optimizer], [*IMPLEMENTATION_FLAGS, "params", "Momentum"]))}
    for key in ("lr", "lr_y"):
        if data.draw(st.booleans()):
            run[key] = data.draw(LR)
    given_names = {k for k in run if k != "optimizer"}
    scheduler = data.draw(st.sampled_from([None, *SCHEDULERS]))
    if scheduler is not None:
        # adagrad has no momentum for OneCycleLR to cycle: such a run always says cycle_momentum.
        always = ("cycle_momentum",) if (optimizer, scheduler) == ("adagrad", "onecycle") else ()
        options = data.draw(_options(SCHEDULER_OPTIONS[scheduler], ["last_epoch", "verbose"],
                                     always))
        run["scheduler"] = {"kind": scheduler, **options}
        given_names |= set(options)
    runs = [run]
    for kind in CLIPS:  # the same run once more with each clip kind
        clip = data.draw(_options(CLIP_OPTIONS[kind], ["norm_type"], always=("max",)))
        runs.append({**run, "clip": {"kind": kind, **clip}})
        given_names |= set(clip)
    body = {"surface": "rosenbrock", "start": [-1.5, 2.0],
            "steps": data.draw(st.sampled_from([1, 2, 7, 30])), "runs": runs}
    _assert_fine_or_named(client.post("/api/descent", json=body), given_names)


@_bounded(30)
@given(optimizer=st.sampled_from(list(OPTIMIZERS)), data=st.data())
def test_a_basins_map_with_any_options_runs_or_names_the_option_it_refuses(
        client: TestClient, optimizer: str, data: st.DataObject) -> None:
    run = {"optimizer": optimizer, "lr": data.draw(LR), **data.draw(_options(
        OPTIMIZER_OPTIONS[optimizer], [*IMPLEMENTATION_FLAGS, "params"]))}
    body = {"surface": "himmelblau", "run": run, "x_range": [-5, 5], "y_range": [-5, 5],
            "resolution": 3, "steps": data.draw(st.sampled_from([1, 5]))}
    _assert_fine_or_named(client.post("/api/basins", json=body),
                          {k for k in run if k != "optimizer"})


@_bounded(30)
@given(optimizer=st.sampled_from(list(OPTIMIZERS)),
       scheduler=st.sampled_from(["none", *SCHEDULERS]), clip=st.sampled_from(["none", *CLIPS]),
       numbers=st.fixed_dictionaries({}, optional={
           "lr": LR, "weight_decay": LR, "max_norm": LR}),
       steps=st.sampled_from([1, 2, 5]))
def test_a_training_run_with_any_options_runs_or_names_the_option_it_refuses(
        client: TestClient, optimizer: str, scheduler: str, clip: str,
        numbers: dict[str, Any], steps: int) -> None:
    body = {"optimizer": optimizer, "scheduler": scheduler, "clip": clip, **numbers,
            "steps": steps, "points": 20, "width": 4, "depth": 1, "batch_size": 10,
            "device": "cpu"}
    given_names = {"optimizer", "scheduler", "clip", *numbers}
    response = client.post("/api/training/run", json=body)
    _assert_fine_or_named(response, given_names)
    if response.status_code == 200:  # a refusal after the first chunk comes as an event
        for block in response.text.strip().split("\n\n"):
            if block.startswith("event: error"):
                error = json.loads(block.split("data: ", 1)[1])["error"]
                assert error["type"] == "request_invalid", error
                assert _names_one(error["message"], given_names), error
