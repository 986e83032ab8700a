# Source: https://github.com/d2l-ai/d2l-zh/blob/master/chapter_linear-networks/linear-regression-concise.md
# Author: Aston Zhang, Zachary C. Lipton, Mu Li, Alexander J. Smola (d2l-ai/d2l-zh); License: Apache-2.0
# Edits:
#   - joined the PyTorch code cells of the page in order
#   - wrapped each cell's final bare expression in print() (as the notebook displays it)
#   - replaced 'from d2l import torch as d2l' with a small class d2l holding tensor, normal, matmul, reshape and synthetic_data copied from d2l/torch.py
import numpy as np
import torch
from torch.utils import data
# --- copied from d2l/torch.py ---
class d2l:
    tensor = torch.tensor
    normal = torch.normal
    matmul = torch.matmul
    reshape = lambda x, *args, **kwargs: x.reshape(*args, **kwargs)
    def synthetic_data(w, b, num_examples):
        """生成y=Xw+b+噪声

        Defined in :numref:`sec_linear_scratch`"""
        X = d2l.normal(0, 1, (num_examples, len(w)))
        y = d2l.matmul(X, w) + b
        y += d2l.normal(0, 0.01, y.shape)
        return X, d2l.reshape(y, (-1, 1))
# --- end of copy ---

true_w = d2l.tensor([2, -3.4])
true_b = 4.2
features, labels = d2l.synthetic_data(true_w, true_b, 1000)

def load_array(data_arrays, batch_size, is_train=True):  #@save
    """构造一个PyTorch数据迭代器"""
    dataset = data.TensorDataset(*data_arrays)
    return data.DataLoader(dataset, batch_size, shuffle=is_train)

batch_size = 10
data_iter = load_array((features, labels), batch_size)

print(next(iter(data_iter)))

# nn是神经网络的缩写
from torch import nn
net = nn.Sequential(nn.Linear(2, 1))

net[0].weight.data.normal_(0, 0.01)
print(net[0].bias.data.fill_(0))

loss = nn.MSELoss()

trainer = torch.optim.SGD(net.parameters(), lr=0.03)

num_epochs = 3
for epoch in range(num_epochs):
    for X, y in data_iter:
        l = loss(net(X) ,y)
        trainer.zero_grad()
        l.backward()
        trainer.step()
    l = loss(net(features), labels)
    print(f'epoch {epoch + 1}, loss {l:f}')

w = net[0].weight.data
print('w的估计误差：', true_w - d2l.reshape(w, true_w.shape))
b = net[0].bias.data
print('b的估计误差：', true_b - b)
