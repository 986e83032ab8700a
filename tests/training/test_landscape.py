"""The loss-landscape lesson's claims (Li et al. 2018): its planes and grids, checked against a
plain per-point loop and the definitions, on small real runs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import torch
from torch import nn

from gradient_lab.errors import RequestInvalid, TooLarge
from gradient_lab.optimizers import OPTIMIZERS, Run
from gradient_lab.training.landscape import ALPHAS, Landscape, map_landscape
from gradient_lab.training.models import build_mlp, make_dataset
from gradient_lab.training.planes import (
    batched_loss,
    filter_normalized,
    grid_coordinates,
    loop_loss,
    losses_on_plane,
    pca_plane,
)

CPU = torch.device("cpu")
SMALL: dict[str, Any] = {"dataset": "moons", "points": 200, "noise": 0.1, "depth": 2,
                         "width": 16, "activation": "tanh", "steps": 40, "resolution": 11,
                         "span": 1.0, "shared": True, "seed": 3, "device": CPU}


@pytest.fixture(autouse=True, scope="module")
def _one_thread() -> Iterator[None]:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def two_runs() -> Landscape:
    return map_landscape(runs=[{"optimizer": "sgd", "lr": 0.5}, {"optimizer": "adam", "lr": 0.02}],
                         **SMALL)


def _net(activation: str = "relu") -> tuple[nn.Sequential, torch.Tensor, torch.Tensor]:
    x, y = make_dataset("spirals", 150, 0.05, 1)
    torch.manual_seed(1)
    return build_mlp(2, 12, 3, 2, activation=activation), x, y  # type: ignore[arg-type]


@pytest.mark.parametrize("activation", ["relu", "tanh", "gelu", "leaky_relu", "sigmoid"])
def test_the_batched_grid_equals_a_plain_loop_over_its_points(activation: str) -> None:
    model, x, y = _net(activation)
    centre = nn.utils.parameters_to_vector(model.parameters()).detach()
    g = torch.Generator().manual_seed(0)
    directions = torch.stack([filter_normalized(model, g), filter_normalized(model, g)])
    units = torch.linspace(-1, 1, 9)
    points = grid_coordinates(units, units)
    batched = losses_on_plane(batched_loss(model, x, y), centre, directions, points, chunk=7)
    assert batched.shape == (81,)
    assert torch.allclose(batched, loop_loss(model, x, y, centre, directions, points), atol=1e-5)


def test_the_grid_is_in_plotlys_order_row_y_column_x() -> None:
    xs, ys = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([10.0, 20.0])
    z = grid_coordinates(xs, ys).reshape(2, 3, 2)
    assert z[1][2].tolist() == [3.0, 20.0]  # z[i][j] = f(xs[j], ys[i])


def test_direction_rows_have_the_weights_row_norms_and_biases_are_zero() -> None:
    model, _, _ = _net()
    direction = filter_normalized(model, torch.Generator().manual_seed(5))
    start = 0
    for name, p in model.named_parameters():
        part = direction[start:start + p.numel()].view(p.shape)
        start += p.numel()
        if name.endswith("bias"):
            assert bool((part == 0).all()), name
        else:
            assert torch.allclose(part.norm(dim=1), p.detach().norm(dim=1), rtol=1e-5), name
    assert start == len(direction)


def test_batchnorm_parameters_get_a_zero_direction() -> None:
    model = build_mlp(2, 8, 2, 2, batchnorm=True)
    direction = filter_normalized(model, torch.Generator().manual_seed(0))
    norms = [p for name, p in model.named_parameters() if ".1." in name]  # BatchNorm1d's
    assert norms and all(p.dim() == 1 for p in norms)
    start = 0
    for name, p in model.named_parameters():
        if p.dim() == 1:
            assert bool((direction[start:start + p.numel()] == 0).all()), name
        start += p.numel()


def test_a_batchnorm_network_is_refused_by_the_batched_loss() -> None:
    model = build_mlp(2, 8, 2, 2, batchnorm=True)
    with pytest.raises(RequestInvalid, match="BatchNorm"):
        batched_loss(model, torch.zeros(4, 2), torch.zeros(4, dtype=torch.long))


def test_each_random_grids_centre_is_the_final_loss(two_runs: Landscape) -> None:
    middle = SMALL["resolution"] // 2
    for run in two_runs.runs:
        assert run.random.x[middle] == 0.0 and run.random.y[middle] == 0.0
        assert run.random.z[middle][middle] == pytest.approx(run.final_loss, abs=1e-5)
        assert run.path.loss[-1] == pytest.approx(run.final_loss)
        assert run.final_loss < run.path.loss[0]  # it trained


def test_the_final_point_projects_to_the_origin_of_its_own_pca_plane(two_runs: Landscape) -> None:
    for run in two_runs.runs:
        assert (run.path.x[-1], run.path.y[-1]) == (0.0, 0.0)
        assert run.path.plane_loss[-1] == pytest.approx(run.final_loss, abs=1e-5)
        assert len(run.path.x) == SMALL["steps"] + 1


def test_explained_variances_are_a_share_of_at_most_one(two_runs: Landscape) -> None:
    planes = [run.pca for run in two_runs.runs]
    assert two_runs.shared is not None
    for plane in [*planes, two_runs.shared.plane]:
        assert plane.explained is not None
        first, second = plane.explained
        assert 0 <= second <= first and first + second <= 1 + 1e-6


def test_pca_matches_the_covariance_eigenvectors_of_the_path() -> None:
    g = torch.Generator().manual_seed(0)
    path = torch.randn(30, 6, generator=g) * torch.tensor([5.0, 2.0, 0.5, 0.1, 0.1, 0.1])
    directions, coordinates, explained = pca_plane(path, path[-1])
    rows = path - path[-1]
    centred = rows - rows.mean(0)
    values, vectors = torch.linalg.eigh(centred.T @ centred)
    for k in range(2):
        assert abs(float(directions[k] @ vectors[:, -1 - k])) == pytest.approx(1, abs=1e-4)
    assert explained.sum().item() == pytest.approx((values[-2:].sum() / values.sum()).item(),
                                                    rel=1e-5)
    assert torch.allclose(coordinates, rows @ directions.T, atol=1e-5)


def test_a_path_of_one_step_still_gets_two_orthonormal_axes() -> None:
    path = torch.tensor([[1.0, 2.0, 3.0], [1.0, 2.0, 4.0]])
    directions, coordinates, explained = pca_plane(path, path[-1])
    assert torch.allclose(directions @ directions.T, torch.eye(2), atol=1e-6)
    assert explained.tolist() == pytest.approx([1.0, 0.0])
    assert coordinates[-1].tolist() == [0.0, 0.0]


def test_the_shared_plane_starts_every_path_at_the_common_init(two_runs: Landscape) -> None:
    assert two_runs.shared is not None
    for path in two_runs.shared.paths:
        assert (path.x[0], path.y[0]) == (0.0, 0.0)
    first, second = two_runs.shared.paths
    assert first.loss[0] == second.loss[0]  # one seeded init
    assert (first.x[-1], first.y[-1]) != (second.x[-1], second.y[-1])


def test_the_interpolation_runs_from_the_init_to_the_final_weights(two_runs: Landscape) -> None:
    at_init, at_final = ALPHAS.tolist().index(0.0), ALPHAS.tolist().index(1.0)
    for run in two_runs.runs:
        assert run.interpolation[at_init] == pytest.approx(run.path.loss[0], abs=1e-5)
        assert run.interpolation[at_final] == pytest.approx(run.final_loss, abs=1e-5)


def test_the_real_loss_is_a_hand_written_torch_optim_loop() -> None:
    landscape = map_landscape(runs=[Run("momentum", lr=0.1)], **{**SMALL, "shared": False})
    x, y = make_dataset("moons", 200, 0.1, 3)
    torch.manual_seed(3)
    model = build_mlp(2, 16, 2, 2, activation="tanh")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for _ in range(SMALL["steps"]):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        losses.append(loss.item())
        loss.backward()
        optimizer.step()
    assert landscape.runs[0].path.loss[:-1] == pytest.approx(losses, rel=1e-6)


def test_a_step_the_plane_hides_is_flagged() -> None:
    # Plain SGD at a large lr spikes; the spike is off the plane of the path's PCA.
    landscape = map_landscape(runs=[Run("sgd", lr=8.0)], **{**SMALL, "shared": False,
                                                           "steps": 60})
    path = landscape.runs[0].path
    assert path.hidden
    for step in path.hidden:
        assert path.loss[step] > 1.5 * path.plane_loss[step]


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_every_optimizer_of_the_race_draws_a_landscape(name: str) -> None:
    landscape = map_landscape(runs=[Run(name, lr=0.01)],
                              **{**SMALL, "steps": 5, "resolution": 3, "shared": False})
    run = landscape.runs[0]
    assert run.optimizer == name and len(run.random.z) == 3 and len(run.path.x) == 6


def test_a_diverging_run_ends_its_path_at_the_last_finite_step() -> None:
    landscape = map_landscape(runs=[Run("sgd", lr=1e30)],
                              **{**SMALL, "activation": "relu", "shared": False})
    run = landscape.runs[0]
    assert run.diverged and len(run.path.x) < SMALL["steps"] + 1
    assert all(isinstance(v, float) for v in run.path.loss)


@pytest.mark.parametrize(("change", "error", "words"), [
    ({"resolution": 10}, RequestInvalid, "odd"),
    ({"resolution": 83}, TooLarge, "resolution"),
    ({"steps": 5000}, TooLarge, "steps"),
    ({"span": 0.0}, RequestInvalid, "span"),
    ({"points": 4000, "width": 256, "resolution": 81}, TooLarge, "multiply-adds"),
])
def test_requests_past_the_limits_are_refused_naming_the_value(
        change: dict[str, Any], error: type[Exception], words: str) -> None:
    with pytest.raises(error, match=words):
        map_landscape(runs=[Run("sgd")], **{**SMALL, **change})


def test_a_second_parameter_group_is_refused() -> None:
    with pytest.raises(RequestInvalid, match="lr_y"):
        map_landscape(runs=[Run("sgd", lr=0.1, lr_y=0.2)], **SMALL)


def test_the_same_request_gives_the_same_landscape() -> None:
    ask = {**SMALL, "steps": 5, "resolution": 5}
    first = map_landscape(runs=[Run("adam", lr=0.01)], **ask)
    assert first == map_landscape(runs=[Run("adam", lr=0.01)], **ask)
