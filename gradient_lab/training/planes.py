"""Planes through a network's weights (Li et al., "Visualizing the Loss Landscape of Neural
Nets", NeurIPS 2018) and the loss over them, many weight vectors at once.

A plane is a centre θ and two directions (d1, d2) in weight space; the point (a, b) on it is
θ + a·d1 + b·d2. Weights travel as one flat vector (torch.nn.utils.parameters_to_vector's
order), so a trajectory is a [steps + 1, P] matrix and PCA is one SVD of it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import torch
from torch import nn

from gradient_lab.errors import RequestInvalid

# Weight vectors per batched call: about this many activations (points × width) in all, so one
# layer's output stays in the processor's cache (16 vectors of 1,000 points × 32 were fastest).
_ACTIVATIONS_PER_CHUNK = 512_000


def filter_normalized(model: nn.Module, generator: torch.Generator) -> torch.Tensor:
    """A Gaussian direction, flat, each row of each weight rescaled to that weight row's norm.

    .. note:: As the paper does, a "filter" of a Linear weight [out, in] is one row (one
       neuron's incoming weights); biases and BatchNorm's parameters (every 1-D parameter) get
       a zero direction, so the plane never moves them.
    """
    parts = []
    for p in model.parameters():
        w = p.detach()
        if w.dim() <= 1:
            parts.append(torch.zeros_like(w).reshape(-1))
            continue
        d = torch.randn(w.shape, generator=generator, dtype=w.dtype).to(w.device)
        rows, d_rows = w.reshape(w.shape[0], -1), d.reshape(w.shape[0], -1)
        scale = rows.norm(dim=1, keepdim=True) / (d_rows.norm(dim=1, keepdim=True) + 1e-10)
        parts.append((d_rows * scale).reshape(-1))
    return torch.cat(parts)


def pca_plane(trajectory: torch.Tensor,
              centre: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(directions [2, P], coordinates [T, 2], explained variance ratio [2]) of a path's PCA.

    The rows are θ_t − centre; PCA centres them on their mean as sklearn's PCA does (the paper's
    code uses it), and the coordinates project θ_t − centre itself, so the centre is (0, 0).
    The directions are orthonormal, so a coordinate is a distance in weight space.
    """
    rows = (trajectory - centre).double()
    _, s, vh = torch.linalg.svd(rows - rows.mean(0), full_matrices=False)
    variance = s.square()
    total = variance.sum()
    explained = variance[:2] / total if total > 0 else torch.zeros_like(variance[:2])
    directions = vh[:2]
    while len(directions) < 2:  # a path of one or two points: any orthogonal axis will do
        extra = torch.zeros(rows.shape[1], dtype=rows.dtype, device=rows.device)
        extra[len(directions)] = 1.0
        if len(directions):
            extra -= (extra @ directions[0]) * directions[0]
            extra /= extra.norm()
        directions = torch.cat([directions, extra[None]])
        explained = torch.cat([explained, explained.new_zeros(1)])
    return directions.to(trajectory.dtype), (rows @ directions.T).to(trajectory.dtype), explained


def grid_coordinates(xs: torch.Tensor, ys: torch.Tensor) -> torch.Tensor:
    """[len(ys) · len(xs), 2] points (a, b), so that reshaping a value per point to
    [len(ys), len(xs)] gives z[i][j] = f(xs[j], ys[i]): Plotly's order."""
    gx, gy = torch.meshgrid(xs, ys, indexing="xy")
    return torch.stack([gx.reshape(-1), gy.reshape(-1)], 1)


def batched_loss(model: nn.Module, x: torch.Tensor,
                 y: torch.Tensor) -> Callable[[torch.Tensor], torch.Tensor]:
    """f(thetas [B, P]) → the cross-entropy loss on (x, y) of the model with each weight vector.

    B forward passes at once: each Linear becomes one torch.baddbmm over the B weight
    matrices, every other layer (the activations) runs on the [B, points, width] batch as is.

    .. note:: torch.func.vmap over functional_call computes the same values, to float32's
       rounding, but took twice as long here: its batched linear goes through expand and
       reshape copies. So the walk is ours, and covers what build_mlp builds without BatchNorm
       or residual blocks: a chain of Linear layers and elementwise activations.
    """
    modules = list(model.modules())
    layers = [m for m in modules if not any(True for _ in m.children())]
    if any(not isinstance(m, nn.Sequential) for m in modules if m not in layers) or any(
            not isinstance(m, nn.Linear) and any(True for _ in m.parameters()) for m in layers):
        raise RequestInvalid("the batched loss takes a chain of Linear layers and activations, "
                             "without BatchNorm or residual blocks")
    shapes = [p.shape for p in model.parameters()]
    sizes = [p.numel() for p in model.parameters()]

    def losses(thetas: torch.Tensor) -> torch.Tensor:
        batch = len(thetas)
        parts = iter(thetas.split(sizes, dim=1))
        shape = iter(shapes)
        h = x.expand(batch, *x.shape)
        for layer in layers:
            if isinstance(layer, nn.Linear):
                weight = next(parts).view(batch, *next(shape))
                bias = next(parts).view(batch, 1, -1)
                next(shape)
                h = torch.baddbmm(bias, h, weight.transpose(1, 2))
            else:
                h = layer(h)
        return nn.functional.cross_entropy(h.transpose(1, 2), y.expand(batch, *y.shape),
                                           reduction="none").mean(1)

    return losses


def losses_on_plane(loss: Callable[[torch.Tensor], torch.Tensor], centre: torch.Tensor,
                    directions: torch.Tensor, coordinates: torch.Tensor,
                    chunk: int) -> torch.Tensor:
    """The loss at θ = centre + a·d1 + b·d2 for each row (a, b) of `coordinates`, `chunk` at a
    time so that only `chunk` weight vectors and their activations are ever held."""
    with torch.no_grad():
        return torch.cat([loss(torch.addmm(centre, part, directions))
                          for part in coordinates.split(chunk)])


def chunk_for(points: int, width: int) -> int:
    """Weight vectors per batched call: about _ACTIVATIONS_PER_CHUNK activations each."""
    return max(1, _ACTIVATIONS_PER_CHUNK // max(1, points * width))


def loop_loss(model: nn.Module, x: torch.Tensor, y: torch.Tensor, centre: torch.Tensor,
              directions: torch.Tensor, coordinates: torch.Tensor) -> torch.Tensor:
    """The same values as losses_on_plane, one point at a time with the model itself: the
    plain loop the tests and bench/landscape.py hold the batched one to."""
    reference = copy.deepcopy(model)  # its own parameters to overwrite
    out = []
    with torch.no_grad():
        for a, b in coordinates.tolist():
            nn.utils.vector_to_parameters(centre + a * directions[0] + b * directions[1],
                                          reference.parameters())
            out.append(nn.functional.cross_entropy(reference(x), y))
    return torch.stack(out)
