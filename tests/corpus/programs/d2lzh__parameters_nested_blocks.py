# Source: https://github.com/d2l-ai/d2l-zh/blob/master/chapter_deep-learning-computation/parameters.md
# Author: Aston Zhang, Zachary C. Lipton, Mu Li, Alexander J. Smola (d2l-ai/d2l-zh); License: Apache-2.0
# Edits:
#   - kept the page's nested-blocks cells (block1, block2, rgnet) of its PyTorch code
#   - seeded, the output named y, and a loss and loss.backward() added, so that there is a
#     backward to step through
import torch
from torch import nn

torch.manual_seed(0)
X = torch.rand(size=(2, 4))

def block1():
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(),
                         nn.Linear(8, 4), nn.ReLU())

def block2():
    net = nn.Sequential()
    for i in range(4):
        # 在这里嵌套
        net.add_module(f'block {i}', block1())
    return net

rgnet = nn.Sequential(block2(), nn.Linear(4, 1))
y = rgnet(X)
print(y)

loss = y.sum()
loss.backward()
print(rgnet[0][1][0].bias.grad)
