# Source: https://github.com/d2l-ai/d2l-en/blob/master/chapter_builders-guide/lazy-init.md
# Author: Aston Zhang, Zachary C. Lipton, Mu Li, Alexander J. Smola (d2l-ai/d2l-en); License: sample code MIT-0 (LICENSE-SAMPLECODE), text CC BY-SA 4.0
# Edits:
#   - joined the first four PyTorch code cells of the page in order (the last one adds a method to d2l.Module)
#   - removed the unused 'from d2l import torch as d2l'
#   - wrapped each cell's final bare expression in print() (as the notebook displays it)
import torch
from torch import nn

net = nn.Sequential(nn.LazyLinear(256), nn.ReLU(), nn.LazyLinear(10))

print(net[0].weight)

X = torch.rand(2, 20)
net(X)

print(net[0].weight.shape)
