# Source: https://github.com/pytorch/pytorch/issues/12871
# Author: olyaromanyuk (GitHub issue "torch.nn.functional works incorrectly with backward() for non-scalars"), its minimal example
# Edits:
#   - none (on a machine without CUDA it stops at its first .cuda() of a tensor)
# Hint: hint.cuda_missing
import torch
from torch.autograd import Variable
import torch.nn as nn
import torch.nn.functional as F

class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self,x):
        y = torch.sum(x, dim=1)
        y = torch.sum(y, dim=1, keepdim=True)
        print(y)
        y=F.sigmoid(y)
        return y


model = Model()
model.cuda()

x = Variable(torch.zeros(3, 5, 10), requires_grad=True)
x_cuda = x.cuda()
print(x)

y = model(x_cuda)

print(y.shape)
print(y)
y.backward(torch.cuda.FloatTensor([[1]]))

print(x.grad.shape)
print(x.grad)
