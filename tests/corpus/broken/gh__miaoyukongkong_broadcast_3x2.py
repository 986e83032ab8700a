# Source: https://github.com/miaoyukongkong/Programming-Notes/blob/4bc5101c14bf9a3b02d589606774177807cdf19c/Reading-Notes/20211124_Detection_PyTorch_Notebook/chapter2/2.1.6Tensor%E7%9A%84%E8%87%AA%E5%8A%A8%E5%B9%BF%E6%92%AD%E6%9C%BA%E5%88%B6%E4%B8%8E%E5%90%91%E9%87%8F%E5%8C%96.ipynb
# Author: miaoyukongkong (Programming-Notes, a learner's reading notes on 深度学习之PyTorch物体检测实战; the error is recorded in the notebook)
# Edits:
#   - the notebook's code cells in order, up to the one that failed
# Hint: hint.shape_mismatch
import torch

a = torch.Tensor([[[1, 2]], [[3, 4]], [[5, 6]]])
print(a)
print(a.size())

b = torch.Tensor([[7, 8]])
print(b)
print(b.size())

#对于a和b，从尾部遍历维度，2对应2，1对应1，3对应不存在，满足广播机制，计算后的维度为3×1×2
print(a+b)
print((a+b).size())

c = torch.Tensor([[9], [10]])
print(c)
print(c.size())

#对于a和c，从尾部遍历维度，2对应1，1对应2，3对应不存在，满足广播机制，计算后的维度为3×2×2
print(a+c)
print((a+c).size())

d = torch.Tensor([[11, 12, 13], [14, 15, 16]])
print(d)
print(d.size())

#对于a和d，从尾部遍历维度，2对应3，不满足广播机制，因此报错
print(a+d)
print((a+d).size())
