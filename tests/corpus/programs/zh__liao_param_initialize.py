# Source: https://github.com/L1aoXingyu/code-of-learn-deep-learning-with-pytorch/blob/master/chapter3_NN/param_initialize.ipynb
# Author: Liao Xingyu (L1aoXingyu/code-of-learn-deep-learning-with-pytorch, 《深度学习入门之PyTorch》); License: not stated in the repository
# Edits:
#   - joined the notebook's code cells in order
#   - wrapped the final bare expression init.xavier_uniform(net1[0].weight) in print() (as the notebook displays it)
import numpy as np
import torch
from torch import nn

# 定义一个 Sequential 模型
net1 = nn.Sequential(
    nn.Linear(30, 40),
    nn.ReLU(),
    nn.Linear(40, 50),
    nn.ReLU(),
    nn.Linear(50, 10)
)

# 访问第一层的参数
w1 = net1[0].weight
b1 = net1[0].bias

print(w1)

# 定义一个 Tensor 直接对其进行替换
net1[0].weight.data = torch.from_numpy(np.random.uniform(3, 5, size=(40, 30)))

print(net1[0].weight)

for layer in net1:
    if isinstance(layer, nn.Linear): # 判断是否是线性层
        param_shape = layer.weight.shape
        layer.weight.data = torch.from_numpy(np.random.normal(0, 0.5, size=param_shape)) 
        # 定义为均值为 0，方差为 0.5 的正态分布

class sim_net(nn.Module):
    def __init__(self):
        super(sim_net, self).__init__()
        self.l1 = nn.Sequential(
            nn.Linear(30, 40),
            nn.ReLU()
        )
        
        self.l1[0].weight.data = torch.randn(40, 30) # 直接对某一层初始化
        
        self.l2 = nn.Sequential(
            nn.Linear(40, 50),
            nn.ReLU()
        )
        
        self.l3 = nn.Sequential(
            nn.Linear(50, 10),
            nn.ReLU()
        )
    
    def forward(self, x):
        x = self.l1(x)
        x =self.l2(x)
        x = self.l3(x)
        return x

net2 = sim_net()

# 访问 children
for i in net2.children():
    print(i)

# 访问 modules
for i in net2.modules():
    print(i)

for layer in net2.modules():
    if isinstance(layer, nn.Linear):
        param_shape = layer.weight.shape
        layer.weight.data = torch.from_numpy(np.random.normal(0, 0.5, size=param_shape)) 

from torch.nn import init

print(net1[0].weight)

print(init.xavier_uniform(net1[0].weight)) # 这就是上面我们讲过的 Xavier 初始化方法，PyTorch 直接内置了其实现

print(net1[0].weight)
