# Source: https://github.com/d2l-ai/d2l-zh/blob/master/chapter_multilayer-perceptrons/weight-decay.md
# Author: Aston Zhang, Zachary C. Lipton, Mu Li, Alexander J. Smola (d2l-ai/d2l-zh); License: Apache-2.0
# Edits:
#   - joined the PyTorch code cells of the page in order
#   - replaced %matplotlib inline and 'from d2l import torch as d2l' with a small class d2l holding ones, normal, matmul, reshape, synthetic_data, linreg, squared_loss, sgd and load_array copied from d2l/torch.py (plus 'from torch.utils import data' which they need)
#   - removed the Animator from train and train_concise (its creation and the 'if (epoch + 1) % 5 == 0: animator.add(...)' block)
#   - reduced num_epochs from 100 to 50 in train and train_concise (CPU time)
import torch
from torch import nn
from torch.utils import data
# --- copied from d2l/torch.py ---
class d2l:
    ones = torch.ones
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
    def linreg(X, w, b):
        """线性回归模型

        Defined in :numref:`sec_linear_scratch`"""
        return d2l.matmul(X, w) + b
    def squared_loss(y_hat, y):
        """均方损失

        Defined in :numref:`sec_linear_scratch`"""
        return (y_hat - d2l.reshape(y, y_hat.shape)) ** 2 / 2
    def sgd(params, lr, batch_size):
        """小批量随机梯度下降

        Defined in :numref:`sec_linear_scratch`"""
        with torch.no_grad():
            for param in params:
                param -= lr * param.grad / batch_size
                param.grad.zero_()
    def load_array(data_arrays, batch_size, is_train=True):
        """构造一个PyTorch数据迭代器

        Defined in :numref:`sec_linear_concise`"""
        dataset = data.TensorDataset(*data_arrays)
        return data.DataLoader(dataset, batch_size, shuffle=is_train)
# --- end of copy ---

n_train, n_test, num_inputs, batch_size = 20, 100, 200, 5
true_w, true_b = d2l.ones((num_inputs, 1)) * 0.01, 0.05
train_data = d2l.synthetic_data(true_w, true_b, n_train)
train_iter = d2l.load_array(train_data, batch_size)
test_data = d2l.synthetic_data(true_w, true_b, n_test)
test_iter = d2l.load_array(test_data, batch_size, is_train=False)

def init_params():
    w = torch.normal(0, 1, size=(num_inputs, 1), requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    return [w, b]

def l2_penalty(w):
    return torch.sum(w.pow(2)) / 2

def train(lambd):
    w, b = init_params()
    net, loss = lambda X: d2l.linreg(X, w, b), d2l.squared_loss
    num_epochs, lr = 50, 0.003
    for epoch in range(num_epochs):
        for X, y in train_iter:
            # 增加了L2范数惩罚项，
            # 广播机制使l2_penalty(w)成为一个长度为batch_size的向量
            l = loss(net(X), y) + lambd * l2_penalty(w)
            l.sum().backward()
            d2l.sgd([w, b], lr, batch_size)
    print('w的L2范数是：', torch.norm(w).item())

train(lambd=0)

train(lambd=3)

def train_concise(wd):
    net = nn.Sequential(nn.Linear(num_inputs, 1))
    for param in net.parameters():
        param.data.normal_()
    loss = nn.MSELoss(reduction='none')
    num_epochs, lr = 50, 0.003
    # 偏置参数没有衰减
    trainer = torch.optim.SGD([
        {"params":net[0].weight,'weight_decay': wd},
        {"params":net[0].bias}], lr=lr)
    for epoch in range(num_epochs):
        for X, y in train_iter:
            trainer.zero_grad()
            l = loss(net(X), y)
            l.mean().backward()
            trainer.step()
    print('w的L2范数：', net[0].weight.norm().item())

train_concise(0)

train_concise(3)
