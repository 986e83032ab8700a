# Source: https://github.com/chenyuntc/pytorch-book/blob/master/Chapter3/chapter3.ipynb
# Author: Chen Yun (chenyuntc/pytorch-book, 《深度学习框架PyTorch：入门与实践》); License: MIT
# Edits:
#   - joined the notebook's code cells 124-127 in order (section 3.5, linear regression with autograd), leaving out the last cell, which only plots the losses
#   - removed %matplotlib inline, the matplotlib and IPython.display imports, and the plotting lines (plt.scatter, display.clear_output, plt.plot/scatter/xlim/ylim/show/pause); the get_fake_data calls that fed the plots are kept
import torch as t
import numpy as np

# 设置随机数种子，以保证结果可复现
t.manual_seed(1000) 

def get_fake_data(batch_size=8):
    ''' 产生随机数据：y = x * 2 + 3，加上了一些噪声'''
    x = t.rand(batch_size,1) * 5
    y = x * 2 + 3 + t.randn(batch_size, 1)
    return x, y

# 来看看产生x-y分布是什么样的
x, y = get_fake_data()

# 随机初始化参数
w = t.rand(1,1, requires_grad=True)
b = t.zeros(1,1, requires_grad=True)
losses = np.zeros(500)

lr =0.005 # 学习率

for ii in range(500):
    x, y = get_fake_data(batch_size=32)
    
    # forward：计算loss
    y_pred = x.mm(w) + b.expand_as(y)
    loss = 0.5 * (y_pred - y) ** 2
    loss = loss.sum()
    losses[ii] = loss.item()
    
    # backward：自动计算梯度
    loss.backward()
    
    # 更新参数
    w.data.sub_(lr * w.grad.data)
    b.data.sub_(lr * b.grad.data)
    
    # 梯度清零
    w.grad.data.zero_()
    b.grad.data.zero_()
    
    if ii%50 ==0:
        # 画图
        x = t.arange(0, 6).float().view(-1, 1)
        y = x.mm(w.data) + b.data.expand_as(x)
        
        x2, y2 = get_fake_data(batch_size=20) 
        
print(w.item(), b.item())
