# Source: https://bbbdata.com/text/938
# Author: 老饼讲解-深度学习 (bbbdata.com, "pytorch自动求导时中间变量必须是tensor"), its wrong example
# Edits:
#   - none
# Hint: hint.item_backward
import torch
import math
x = torch.tensor([3],dtype=(float),requires_grad=True) # 生成一个tensor数据x
y = math.sin(x) # 根据x计算y
z = 3*y # 根据y计算z
z.backward() # 将y反向传播
print('z对x的梯度:',x.grad)
