# Source: https://github.com/pytorch/pytorch/pull/5299
# Author: elanmart (GitHub pull request "Raise an error if target is out-of-bounds in ClassNLLCriterion"), its example
# Edits:
#   - the interpreter's >>> prompts left out
# Hint: hint.target_out_of_range
import torch
from torch.autograd import Variable
import torch.nn.functional as F

p = Variable(torch.randn(3, 3), requires_grad=True)
y = Variable(torch.LongTensor([99, 100, 101]))
l = F.cross_entropy(p, y, reduce=False)
