# Source: https://github.com/chenyuntc/pytorch-book/blob/master/Chapter3/chapter3.ipynb
# Author: Chen Yun (chenyuntc/pytorch-book, 《深度学习框架PyTorch：入门与实践》); License: MIT
# Edits:
#   - joined the notebook's code cells 82-85 in order (section 3.3, linear regression with hand-written gradients)
#   - removed %matplotlib inline, the matplotlib and IPython.display imports, and the plotting lines (plt.scatter, display.clear_output, plt.plot/scatter/xlim/ylim/show/pause); the get_fake_data calls that fed the plots are kept
import torch as t

device = t.device('cpu') #如果你想用GPU，改成t.device('cuda:0')

# 设置随机数种子，保证在不同电脑上运行时下面的输出一致
t.manual_seed(1000) 

def get_fake_data(batch_size=8):
    ''' 产生随机数据：y=x*2+3，加上了一些噪声'''
    x = t.rand(batch_size, 1, device=device) * 5
    y = x * 2 + 3 +  t.randn(batch_size, 1, device=device)
    return x, y

# 来看看产生的x-y分布
x, y = get_fake_data(batch_size=16)

# 随机初始化参数
w = t.rand(1, 1).to(device)
b = t.zeros(1, 1).to(device)

lr =0.02 # 学习率learning rate

for ii in range(500):
    x, y = get_fake_data(batch_size=4)
    
    # forward：计算loss
    y_pred = x.mm(w) + b.expand_as(y) #expand_as用到了广播法则，将在第六章详析介绍
    loss = 0.5 * (y_pred - y) ** 2 # 均方误差
    loss = loss.mean()
    
    # backward：手动计算梯度
    dloss = 1
    dy_pred = dloss * (y_pred - y)
    
    dw = x.t().mm(dy_pred)
    db = dy_pred.sum()
    
    # 更新参数
    w.sub_(lr * dw) # inplace修改
    b.sub_(lr * db)
    
    if ii%50 ==0:
        # 画图
        x = t.arange(0, 6).float().view(-1, 1)
        print(x.type(), w.type())
        y = x.mm(w) + b.expand_as(x)
        
        x2, y2 = get_fake_data(batch_size=32) 
        
print('w: ', w.item(), 'b: ', b.item())
