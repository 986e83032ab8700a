# Source: https://github.com/rasbt/stat453-deep-learning-ss21/blob/main/L06/code/pytorch-autograd.ipynb
# Author: Sebastian Raschka (STAT 453, Spring 2021); License: MIT
# Edits:
#   - code cells joined in notebook order
#   - removed the %load_ext watermark / %watermark IPython magic cell
#   - wrapped each cell's final bare expression in print()
import torch
from torch.autograd import grad
import torch.nn.functional as F

x = torch.tensor([3.])
w = torch.tensor([2.], requires_grad=True)
b = torch.tensor([1.], requires_grad=True)
a = F.relu(x*w + b)

print(a)

print(grad(a, w, retain_graph=True))

print(grad(a, b))

x = torch.tensor([3.])
w = torch.tensor([2.], requires_grad=True)
b = torch.tensor([1.], requires_grad=True)

def my_relu(z):
    if z > 0.:
        return z
    else:
        z[:] = 0.
        return z

a = my_relu(x*w + b)
print(grad(a, w))

x = torch.tensor([-1.])
w = torch.tensor([1.], requires_grad=True)
b = torch.tensor([1.], requires_grad=True)

def my_relu(z):
    if z > 0.:
        return z
    else:
        z[:] = 0.
        return z

a = F.relu(x*w + b)
print(grad(a, w, retain_graph=False))
