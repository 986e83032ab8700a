# Source: https://github.com/pytorch/pytorch/issues/5860
# Author: krstopro (GitHub issue "Error feedback when applying LSTM on input of wrong size")
# Edits:
#   - none
# Hint: hint.shape_mismatch
import torch
import torch.autograd as autograd
import torch.nn as nn

lstm = nn.LSTM(3, 2)
hidden = (autograd.Variable(torch.zeros(3, 2)), autograd.Variable(torch.zeros(3, 2)))
input = autograd.Variable(torch.randn(6, 4, 5))
lstm(input, hidden)
