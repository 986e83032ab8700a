# Source: https://github.com/pytorch/pytorch/issues/4957
# Author: samuela (GitHub issue "confusing error message `ValueError: can't optimize a non-leaf Variable`")
# Edits:
#   - none
# Hint: hint.module_not_parameters
import itertools
import torch
from torch.autograd import Variable

net = torch.nn.Linear(1, 1)
W = Variable(torch.zeros(1, 1), requires_grad=True)

# This does NOT work!
torch.optim.Adam(itertools.chain(*net.parameters(), W))

# ... but this works just fine.
torch.optim.Adam([*net.parameters(), W])
