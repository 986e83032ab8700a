# Source: https://docs.pytorch.org/docs/stable/generated/torch.func.jacfwd.html (the examples in its docstring)
# Author: PyTorch project (torch/_functorch/eager_transforms.py in torch 2.13.0); License: BSD-3-Clause
# Edits:
#   - the doctest prompts (>>> and ...) removed; the examples, one after another, make one program
#   - `import torch` added at the top: the examples take it as imported
import torch

from torch.func import jacfwd
x = torch.randn(5)
jacobian = jacfwd(torch.sin)(x)
expected = torch.diag(torch.cos(x))
assert torch.allclose(jacobian, expected)
from torch.func import jacfwd, vmap
x = torch.randn(64, 5)
jacobian = vmap(jacfwd(torch.sin))(x)
assert jacobian.shape == (64, 5, 5)
from torch.func import jacfwd
x = torch.randn(5)

def f(x):
  return x.sin()

def g(x):
  result = f(x)
  return result, result

jacobian_f, f_x = jacfwd(g, has_aux=True)(x)
assert torch.allclose(f_x, f(x))
from torch.func import jacfwd, jacrev
def f(x):
  return x.sin().sum()

x = torch.randn(5)
hessian = jacfwd(jacrev(f))(x)
assert torch.allclose(hessian, torch.diag(-x.sin()))
from torch.func import jacfwd
def f(x, y):
  return x + y ** 2

x, y = torch.randn(5), torch.randn(5)
jacobian = jacfwd(f, argnums=1)(x, y)
expected = torch.diag(2 * y)
assert torch.allclose(jacobian, expected)
from torch.func import jacfwd
def f(x, y):
  return x + y ** 2

x, y = torch.randn(5), torch.randn(5)
jacobian = jacfwd(f, argnums=(0, 1))(x, y)
expectedX = torch.diag(torch.ones_like(x))
expectedY = torch.diag(2 * y)
assert torch.allclose(jacobian[0], expectedX)
assert torch.allclose(jacobian[1], expectedY)
