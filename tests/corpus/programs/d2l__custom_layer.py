# Source: https://github.com/d2l-ai/d2l-en/blob/master/chapter_builders-guide/custom-layer.md
# Author: Aston Zhang, Zachary C. Lipton, Mu Li, Alexander J. Smola (d2l-ai/d2l-en); License: sample code MIT-0 (LICENSE-SAMPLECODE), text CC BY-SA 4.0
# Edits:
#   - joined the PyTorch code cells of the page in order
#   - replaced 'from d2l import torch as d2l' with a small class d2l holding the aliases tensor and rand copied from d2l/torch.py
#   - wrapped each cell's final bare expression in print() (as the notebook displays it)
import torch
from torch import nn
from torch.nn import functional as F
# --- copied from d2l/torch.py ---
class d2l:
    tensor = torch.tensor
    rand = torch.rand
# --- end of copy ---

class CenteredLayer(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, X):
        return X - X.mean()

layer = CenteredLayer()
print(layer(d2l.tensor([1.0, 2, 3, 4, 5])))

net = nn.Sequential(nn.LazyLinear(128), CenteredLayer())

Y = net(d2l.rand(4, 8))
print(Y.mean())

class MyLinear(nn.Module):
    def __init__(self, in_units, units):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_units, units))
        self.bias = nn.Parameter(torch.randn(units,))
        
    def forward(self, X):
        linear = torch.matmul(X, self.weight.data) + self.bias.data
        return F.relu(linear)

linear = MyLinear(5, 3)
print(linear.weight)

print(linear(torch.rand(2, 5)))

net = nn.Sequential(MyLinear(64, 8), MyLinear(8, 1))
print(net(torch.rand(2, 64)))
