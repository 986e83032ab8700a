"""The training lessons' claims, each checked on a real (small) run and against plain torch."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any, get_args

import pytest
import torch
from torch import nn

import gradient_lab.training.precision as precision
from gradient_lab.errors import RequestInvalid, TooLarge
from gradient_lab.optimizers import Run, make_optimizer, make_scheduler
from gradient_lab.training import (
    ACTIVATIONS,
    FLOW_PRESETS,
    INITS,
    TrainConfig,
    accumulate,
    compare_precision,
    gradient_flow,
    hunt_nan,
    train,
)
from gradient_lab.training.loop import chunk_steps, clip_gradients
from gradient_lab.training.models import Activation, Init, build_mlp, make_dataset
from gradient_lab.training.nan import CAUSES, Origin, _watch_backward

CPU = torch.device("cpu")


@pytest.fixture(autouse=True, scope="module")
def _one_thread() -> Iterator[None]:
    # As in a sandbox worker: small matmuls on a shared 2-core machine are fastest on one thread.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _flow(preset: str, **overrides: Any) -> list[float]:
    options: dict[str, Any] = {"depth": 20, "width": 32, "activation": "relu", "init": "default",
                               "batchnorm": False, "residual": False, "steps": 1, "lr": 0.1,
                               "batch": 64, "seed": 0, "device": CPU}
    options.update(FLOW_PRESETS[preset], **overrides)
    return [float(n) for n in gradient_flow(**options).norms]


def test_sigmoid_at_depth_20_leaves_the_first_layer_a_thousandth_of_the_last() -> None:
    norms = _flow("sigmoid_vanishes")
    assert len(norms) == 21
    assert norms[0] < 1e-3 * norms[-1]


def test_relu_with_he_init_keeps_every_layer_within_10x() -> None:
    norms = _flow("relu_he")
    assert max(norms) < 10 * min(norms)


def test_normal_init_makes_every_gradient_explode() -> None:
    assert min(_flow("normal_explodes")) > 1e6
    assert max(_flow("relu_he")) < 10


def test_batchnorm_tames_the_exploding_init() -> None:
    assert max(_flow("batchnorm")) < 1e3


def test_residual_connections_carry_the_gradient_past_sigmoid_layers() -> None:
    with_skip, without = _flow("residual"), _flow("sigmoid_vanishes")
    assert with_skip[0] > 1e-3 * with_skip[-1]
    assert with_skip[0] > 1e10 * without[0]


def test_flow_heatmap_is_layers_by_steps_and_matches_a_plain_loop() -> None:
    flow = gradient_flow(depth=3, width=16, activation="tanh", init="xavier", batchnorm=False,
                         residual=False, steps=5, lr=0.5, batch=32, seed=3, device=CPU)
    assert len(flow.heatmap) == 4 and all(len(row) == 5 for row in flow.heatmap)
    torch.manual_seed(3)
    model = build_mlp(16, 16, 3, 2, activation="tanh", init="xavier")
    x = torch.randn(32, 16, generator=torch.Generator().manual_seed(3))
    y = (x[:, 0] > 0).long()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    for step in range(5):
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        weights = [m.weight for m in model.modules() if isinstance(m, nn.Linear)]
        for layer, w in enumerate(weights):
            assert flow.heatmap[layer][step] == pytest.approx(w.grad.norm().item(), rel=1e-5)
        optimizer.step()


def test_registries_and_their_literal_names_agree() -> None:
    assert set(get_args(Activation)) == set(ACTIVATIONS)
    assert set(get_args(Init)) == set(INITS)


def test_sizes_past_the_limits_are_refused_naming_the_value() -> None:
    with pytest.raises(TooLarge, match="depth is 51; the limit is 50"):
        _flow("relu_he", depth=51)
    with pytest.raises(TooLarge, match="steps is 2001"):
        next(train(TrainConfig(steps=2001), device=CPU, max_chunks=200))


def _whole_run(config: TrainConfig, max_chunks: int = 200) -> list[Any]:
    return list(train(config, device=CPU, max_chunks=max_chunks))


def test_a_run_past_max_chunks_sends_more_steps_in_each_and_the_same_losses() -> None:
    config = TrainConfig(steps=30, points=200, batch_size=50, width=16)
    free = _whole_run(config)
    bounded = _whole_run(config, max_chunks=2)
    assert len(free) == 4 and len(bounded) == 2
    assert [c.start for c in bounded] == [0, 15]
    assert [v for c in bounded for v in c.loss] == [v for c in free for v in c.loss]


@pytest.mark.parametrize(("optimizer", "scheduler", "accumulation"),
                         [("adam", "none", 1), ("momentum", "onecycle", 2), ("sgd", "step", 1),
                          ("rmsprop", "plateau", 1)])
def test_a_chunked_run_matches_the_same_loop_written_plainly(
        optimizer: str, scheduler: str, accumulation: int) -> None:
    config = TrainConfig(steps=30, points=200, batch_size=50, width=16, optimizer=optimizer,
                         scheduler=scheduler, lr=0.05, accumulation=accumulation)
    chunks = _whole_run(config)
    assert len(chunks) == math.ceil(30 / chunk_steps(config, 200)) > 1
    assert chunks[0].data is not None and chunks[1].data is None
    losses = [v for c in chunks for v in c.loss]
    lrs = [v for c in chunks for v in c.lr]

    x, y = make_dataset("moons", 200, 0.1, 0)
    torch.manual_seed(0)
    model = build_mlp(2, 16, 2, 2)
    opt = make_optimizer(Run(optimizer, 0.05), list(model.parameters()))
    sched = None if scheduler == "none" else make_scheduler({"kind": scheduler}, opt, 30)
    expected_loss, expected_lr = [], []
    for step in range(30):
        expected_lr.append(opt.param_groups[0]["lr"])
        opt.zero_grad()
        total = 0.0
        for k in range(accumulation):
            micro = step * accumulation + k
            epoch, i = divmod(micro, 4)  # 200 points / 50 per batch, shuffled every epoch
            order = torch.randperm(200, generator=torch.Generator().manual_seed(epoch))
            index = order[i * 50:(i + 1) * 50]
            loss = nn.functional.cross_entropy(model(x[index]), y[index]) / accumulation
            loss.backward()
            total += loss.item()
        opt.step()
        if scheduler == "plateau":
            sched.step(total)
        elif sched is not None:
            sched.step()
        expected_loss.append(total)
    assert losses == pytest.approx(expected_loss, rel=1e-5)
    assert lrs == pytest.approx(expected_lr)


def test_an_option_torch_refuses_mid_run_is_a_request_error_naming_it() -> None:
    # The schema bounds lr at 100; past float32 / 10, Adam's lr / (1 - beta1) cannot step.
    with pytest.raises(RequestInvalid, match=r"adam at step 1 with .*lr=3e\+38"):
        _whole_run(TrainConfig(optimizer="adam", lr=3e38, steps=2, points=20, width=4))


def test_training_learns_the_moons() -> None:
    chunks = _whole_run(TrainConfig(steps=100, points=400))
    assert chunks[-1].accuracy > 0.95
    assert len(chunks[-1].boundary) == 40 and len(chunks[-1].boundary[0]) == 40


@pytest.mark.parametrize("clip", ["norm", "value"])
def test_clipping_keeps_the_post_clip_norm_within_its_bound(clip: str) -> None:
    config = TrainConfig(steps=20, points=200, width=16, optimizer="sgd", lr=0.5, clip=clip,
                         max_norm=0.05)
    chunks = _whole_run(config)
    before = [v for c in chunks for v in c.grad_norm]
    after = [v for c in chunks for v in c.clipped_norm]
    assert max(before) > 0.05
    if clip == "norm":
        assert max(after) <= 0.05 * (1 + 1e-5)
    assert all(a <= b * (1 + 1e-6) for a, b in zip(after, before, strict=True))


def test_clip_value_bounds_every_gradient_entry() -> None:
    model = nn.Linear(3, 2)
    model(torch.full((4, 3), 10.0)).sum().backward()
    before, after = clip_gradients(model, "value", 0.5)
    assert all(p.grad.abs().max() <= 0.5 for p in model.parameters())  # type: ignore[union-attr]
    assert after < before


def test_accumulated_micro_batches_give_the_big_batch_gradient() -> None:
    result = accumulate(micro_batches=4, micro_batch=32, seed=0, device=CPU)
    assert result.max_difference < 1e-6
    assert result.accumulated == pytest.approx(result.big_batch, rel=1e-5)


def test_forgetting_the_division_makes_the_gradient_4x_too_large() -> None:
    result = accumulate(micro_batches=4, micro_batch=32, seed=0, device=CPU)
    assert result.ratio_undivided == pytest.approx(4.0, rel=1e-5)
    assert result.max_difference_undivided > 1e-2


def test_bfloat16_autocast_on_cpu_follows_the_float32_curve() -> None:
    result = compare_precision(steps=15, width=64, batch=128, seed=0, device=CPU)
    assert (result.dtype, result.scaler, result.memory_amp) == ("bfloat16", False, None)
    assert result.loss_amp[-1] < result.loss_amp[0]
    assert 0 < result.max_loss_difference < 0.05  # rounding shows, but it learns the same


def test_each_precision_run_stops_at_its_time_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """A CPU without bfloat16 units can run autocast ten times slower: the lesson stays bounded."""
    monkeypatch.setattr(precision, "RUN_SECONDS", 0.0)
    result = compare_precision(steps=20, width=16, batch=32, seed=0, device=CPU)
    assert (result.steps, len(result.loss_fp32), len(result.loss_amp)) == (20, 1, 1)
    assert result.max_loss_difference == abs(result.loss_fp32[0] - result.loss_amp[0])


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_float16_with_a_grad_scaler_on_cuda_follows_the_float32_curve() -> None:
    result = compare_precision(steps=30, width=256, batch=512, seed=0, device=torch.device("cuda"))
    assert (result.dtype, result.scaler) == ("float16", True)
    assert result.memory_fp32 is not None and result.memory_amp is not None
    assert result.loss_amp[-1] < result.loss_amp[0]
    assert result.max_loss_difference < 0.05


def _first_nonfinite_loss_in_a_plain_loop(cause: str) -> int | None:
    """The oracle: the tutorial's loop, printing nothing, watching only the loss."""
    setup = CAUSES[cause]  # type: ignore[index]
    x, y = make_dataset("moons", 256, 0.1, 0)
    x, y = x * setup["scale"], y.float()
    torch.manual_seed(0)
    model = build_mlp(2, 32, 2, 1, activation="relu")
    optimizer = torch.optim.SGD(model.parameters(), lr=setup["lr"])
    for step in range(100):
        optimizer.zero_grad()
        out = model(x).squeeze(1)
        if setup["loss"] == "mse":
            loss = nn.functional.mse_loss(out, y)
        else:
            p = torch.sigmoid(out)
            loss = -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()
        if not torch.isfinite(loss):
            return step
        loss.backward()
        optimizer.step()
    return None


@pytest.mark.parametrize(("cause", "origin"), [
    ("lr", Origin("forward", "loss", "mse_loss")),
    ("log0", Origin("forward", "loss", "log")),
    ("unnormalised", Origin("forward", "1.0 (Linear)", "linear")),
])
def test_the_first_nonfinite_step_and_its_origin_are_found(cause: str, origin: Origin) -> None:
    hunt = hunt_nan(cause=cause, fix="none", steps=100, seed=0, device=CPU)  # type: ignore[arg-type]
    expected = _first_nonfinite_loss_in_a_plain_loop(cause)
    assert expected is not None
    assert hunt.first_nonfinite_step == expected
    assert hunt.origin == origin
    assert len(hunt.loss) == expected + 1
    assert hunt.loss[-1] in ("NaN", "Infinity")  # JSON has no NaN: spelled as a string


def test_the_gradient_norm_monitor_climbs_before_the_lr_blows_up() -> None:
    hunt = hunt_nan(cause="lr", fix="none", steps=100, seed=0, device=CPU)
    norms = [float(n) for n in hunt.grad_norm[:-1]]
    assert norms[-1] > 1e3 * norms[0]


@pytest.mark.parametrize(("cause", "fix"), [("lr", "lower_lr"), ("lr", "clip"),
                                            ("log0", "epsilon"), ("unnormalised", "normalise"),
                                            ("unnormalised", "clip")])
def test_each_fix_keeps_its_run_finite(cause: str, fix: str) -> None:
    hunt = hunt_nan(cause=cause, fix=fix, steps=100, seed=0, device=CPU)  # type: ignore[arg-type]
    assert hunt.first_nonfinite_step is None and hunt.origin is None
    assert len(hunt.loss) == 100


def test_a_nan_born_in_backward_is_named_by_its_backward_node() -> None:
    x = torch.zeros(3, requires_grad=True)
    loss = torch.sqrt(x).sum()  # finite forward; d sqrt/dx at 0 is infinite
    found, handles = _watch_backward(loss, {})
    loss.backward()
    for handle in handles:
        handle.remove()
    assert found == [Origin("backward", "loss", "SqrtBackward0")]
