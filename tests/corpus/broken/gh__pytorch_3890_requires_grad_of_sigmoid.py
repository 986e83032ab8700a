# Source: https://github.com/pytorch/pytorch/issues/3890
# Author: calebh (GitHub issue "requires_grad cannot be set to True for non-leaf nodes, but retain_grad needs requires_grad to be True")
# Edits:
#   - none
# Hint: hint.requires_grad_nonleaf
import torch
import numpy as np
from torch.autograd import Variable

x = Variable(torch.zeros(3,3), requires_grad=True)
s = torch.sigmoid(x)
s.requires_grad = True
s.retain_grad()
total = torch.sum(s)
total.backward()
assert(s.grad is not None)
