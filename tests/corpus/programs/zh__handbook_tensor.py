# Source: https://github.com/zergtant/pytorch-handbook/blob/master/chapter2/2.1.1.pytorch-basics-tensor.ipynb
# Author: zergtant (pytorch-handbook, PyTorch 中文手册); License: CC BY-NC-SA 3.0 CN
# Edits:
#   - joined the notebook's code cells in order, leaving out the three GPU cells (gpu_a=cpu_a.cuda(), cpu_b=gpu_a.cpu(), and gpu_b=cpu_b.to(device), which needs cpu_b)
#   - wrapped each cell's final bare expression in print() (as the notebook displays it)
# 首先要引入相关的包
import torch
import numpy as np
#打印一下版本
print(torch.__version__)

x = torch.rand(2, 3)
print(x)

# 可以使用与numpy相同的shape属性查看
print(x.shape)
# 也可以使用size()函数，返回的结果都是相同的
print(x.size())

y=torch.rand(2,3,4,5)
print(y.size())
print(y)

#我们直接使用现有数字生成
scalar =torch.tensor(3.1433223)
print(scalar)
#打印标量的大小
print(scalar.size())

print(scalar.item())

tensor = torch.tensor([3.1433223]) 
print(tensor)
print(tensor.size())

print(tensor.item())

long=tensor.long()
print(long)

half=tensor.half()
print(half)

int_t=tensor.int()
print(int_t)

flo = tensor.float()
print(flo)

short = tensor.short()
print(short)

ch = tensor.char()
print(ch)

bt = tensor.byte()
print(bt)

a = torch.randn((3, 2))
# tensor转化为numpy
numpy_a = a.numpy()
print(numpy_a)

torch_a = torch.from_numpy(numpy_a)
print(torch_a)

cpu_a=torch.rand(4, 3)
print(cpu_a.type())

# 使用[0,1]均匀分布随机初始化二维数组
rnd = torch.rand(5, 3)
print(rnd)

##初始化，使用1填充
one = torch.ones(2, 2)
print(one)

##初始化，使用0填充
zero=torch.zeros(2,2)
print(zero)

#初始化一个单位矩阵，即对角线为1 其他为0
eye=torch.eye(2,2)
print(eye)

x = torch.randn(3, 3)
print(x)

# 沿着行取最大值
max_value, max_idx = torch.max(x, dim=1)
print(max_value, max_idx)

# 每行 x 求和
sum_x = torch.sum(x, dim=1)
print(sum_x)

y=torch.randn(3, 3)
z = x + y
print(z)

# add 完成后x的值改变了
x.add_(y)
print(x)
