# Source: https://github.com/pytorch/pytorch/issues/53466
# Author: ilovepytorch (GitHub issue "RuntimeError: Only Tensors of floating point and complex dtype can require gradients"), the first line of torch.enable_grad's docs example
# Edits:
#   - `import torch` added above the line
# Hint: hint.int_requires_grad
import torch
x = torch.tensor([1], requires_grad=True)
