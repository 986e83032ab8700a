# Source: https://docs.pytorch.org/docs/stable/generated/torch.func.jvp.html (the examples in its docstring)
# Author: PyTorch project (torch/_functorch/eager_transforms.py in torch 2.13.0); License: BSD-3-Clause
# Edits:
#   - the doctest prompts (>>> and ...) removed; the examples, one after another, make one program
#   - `import torch` added at the top: the examples take it as imported
import torch

from torch.func import jvp
x = torch.randn([])
f = lambda x: x * torch.tensor([1.0, 2.0, 3])
value, grad = jvp(f, (x,), (torch.tensor(1.0),))
assert torch.allclose(value, f(x))
assert torch.allclose(grad, torch.tensor([1.0, 2, 3]))
from torch.func import jvp
x = torch.randn(5)
y = torch.randn(5)
f = lambda x, y: (x * y)
_, output = jvp(f, (x, y), (torch.ones(5), torch.ones(5)))
assert torch.allclose(output, x + y)
