# Source: https://github.com/miaoyukongkong/Programming-Notes/blob/4bc5101c14bf9a3b02d589606774177807cdf19c/Reading-Notes/20211124_Detection_PyTorch_Notebook/chapter2/2.3.2%E6%8D%9F%E5%A4%B1%E5%87%BD%E6%95%B0(%E4%BA%A4%E5%8F%89%E7%86%B5%E6%8D%9F%E5%A4%B1%E6%9C%AA%E7%9F%A5%E9%94%99%E8%AF%AF).ipynb
# Author: miaoyukongkong (Programming-Notes, a learner's reading notes on 深度学习之PyTorch物体检测实战; the error is recorded in the notebook)
# Edits:
#   - the notebook's code cells in order; `from perception_sequential import Perception` replaced by that file of the same folder (by @dongdonghy)
# Hint: hint.cuda_missing
import torch
from torch import nn
import torch.nn.functional as F

from torch import nn

class Perception(nn.Module):
    def __init__(self, in_dim, hid_dim, out_dim):
        super(Perception, self).__init__()
        #利用nn.Sequential()快速搭建网络模块
        self.layer = nn.Sequential(
          nn.Linear(in_dim, hid_dim),
          nn.Sigmoid(),
          nn.Linear(hid_dim, out_dim),
          nn.Sigmoid()
)
    def forward(self, x):
        y = self.layer(x)
        return y

#复制2.3.1节中的第2个例子
model = Perception(100, 1000, 10).cuda()
input = torch.randn(100).cuda()
output = model(input)
output

#设置标签，由于是二分类，一共有4个样本，因此标签维度为1×4，每个数为0或1两个类别
label = torch.Tensor([0, 1, 1, 0]).long()
label

#实例化nn中的交叉熵损失类
criterion = nn.CrossEntropyLoss()
criterion

#调用交叉熵损失
loss_nn = criterion(output, label)
loss_nn

#由于F.cross_entropy是一个函数，因此可以直接调用，不需要实例化，两者求得的损失值相同
loss_functional = F.cross_entropy(output, label)
loss_loss_functional
