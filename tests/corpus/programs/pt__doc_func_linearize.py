# Source: https://docs.pytorch.org/docs/stable/generated/torch.func.linearize.html (the examples in its docstring)
# Author: PyTorch project (torch/_functorch/eager_transforms.py in torch 2.13.0); License: BSD-3-Clause
# Edits:
#   - the doctest prompts (>>> and ...) removed; the examples, one after another, make one program
import torch
from torch.func import linearize
def fn(x):
    return x.sin()

output, jvp_fn = linearize(fn, torch.zeros(3, 3))
jvp_fn(torch.ones(3, 3))
