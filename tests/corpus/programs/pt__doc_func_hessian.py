# Source: https://docs.pytorch.org/docs/stable/generated/torch.func.hessian.html (the examples in its docstring)
# Author: PyTorch project (torch/_functorch/eager_transforms.py in torch 2.13.0); License: BSD-3-Clause
# Edits:
#   - the doctest prompts (>>> and ...) removed; the examples, one after another, make one program
#   - `import torch` added at the top: the examples take it as imported
import torch

from torch.func import hessian
def f(x):
  return x.sin().sum()

x = torch.randn(5)
hess = hessian(f)(x)  # equivalent to jacfwd(jacrev(f))(x)
assert torch.allclose(hess, torch.diag(-x.sin()))
