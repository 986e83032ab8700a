# Source: https://github.com/chenyuntc/pytorch-book/blob/master/Chapter4/Chapter4.ipynb
# Author: Chen Yun (chenyuntc/pytorch-book, 《深度学习框架PyTorch：入门与实践》); License: MIT
# Edits:
#   - joined the notebook's code cells 37-60 in order (optimizers, then nn.Module internals), after its first two cells (import torch as t, and the Linear layer that cell 37's Perceptron uses); left out the later cells that save and load files
#   - wrapped each cell's final bare expression in print() (as the notebook displays it)
import torch as t
from torch import nn
print(t.__version__)

class Linear(nn.Module): # 继承nn.Module，必须重写构造函数（__init__)和前向传播函数（forward）
    def __init__(self, in_features, out_features):
        super().__init__() # 等价于nn.Module.__init__(self)，常用super方式
        # nn.Parameter内的参数是网络可学习的参数
        self.w = nn.Parameter(t.randn(in_features, out_features))
        self.b = nn.Parameter(t.randn(out_features))
    
    def forward(self, x):
        x = x.mm(self.w) # 矩阵乘法，等价于x.@(self.w)
        return x + self.b.expand_as(x)

# 以本章4.1节的感知器为例
class Perceptron(nn.Module):
    def __init__(self, in_features, hidden_features, out_features):
        super(Perceptron, self).__init__()
        # 此处的Linear是前面自定义的全连接层
        self.layer1 = Linear(in_features, hidden_features) 
        self.layer2 = Linear(hidden_features, out_features)
    def forward(self, x):
        x = self.layer1(x)
        x = t.sigmoid(x)
        return self.layer2(x)

net=Perceptron(3,4,1)

from torch import optim
optimizer = optim.SGD(params=net.parameters(), lr=1)
optimizer.zero_grad() # 梯度清零，等价于net.zero_grad()

input = t.randn(32, 3)
output = net(input)
output.backward(output) # fake backward

optimizer.step() # 执行优化

weight_params = [param for name,param in net.named_parameters() if name.endswith('.w')]
bias_params = [param for name,param in net.named_parameters() if name.endswith('.b')]

optimizer =optim.SGD([
                {'params':bias_params},
                {'params': weight_params, 'lr': 1e-2}
            ], lr=1e-5)
print(optimizer)

# 只为第一个全连接层设置较大的学习率，其余层的学习率较小
special_layers = nn.ModuleList([net.layer1])
special_layers_params = list(map(id, special_layers.parameters()))
base_params = [param for param in net.parameters() if id(param) not in special_layers_params]
optimizer = t.optim.SGD([
            {'params': base_params},
            {'params': special_layers.parameters(), 'lr': 0.01}
        ], lr=0.001 )
print(optimizer)

# 调整学习率，新建一个optimizer
old_lr = 0.1
optimizer1 =optim.SGD([
                {'params': bias_params},
                {'params': weight_params, 'lr': old_lr*0.1}
            ], lr=1e-5)
print(optimizer1)

# 调整学习率, 手动decay, 保存动量
for param_group in optimizer.param_groups:
    param_group['lr'] *= 0.1 # 学习率为之前的0.1倍
print(optimizer)

class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        # 等价与self.register_parameter('param1' ,nn.Parameter(t.randn(3, 3)))
        self.param1 = nn.Parameter(t.rand(3, 3))
        self.submodel1 = nn.Linear(3, 4) 
    def forward(self, input):
        x = self.param1.mm(input)
        x = self.submodel1(x)
        return x
net = Net()
print(net)

print(net._modules)

print(net._parameters)

print(net.param1) # 等价于net._parameters['param1']

for name, param in net.named_parameters():
    print(name, param.size())

for name, submodel in net.named_modules():
    print(name, submodel) # 当前module和他的子module

bn = nn.BatchNorm1d(2)
input = t.rand(3, 2)
output = bn(input)
print(bn._buffers)

input = t.arange(0, 12).view(3, 4).float()
model = nn.Dropout()
# 在训练阶段，会有一半左右的数被随机置为0
print(model(input))

model.training  = False
# 在测试阶段，dropout什么都不做
print(model(input))

print(net.training, net.submodel1.training)

net.eval() # eval()将所有的training属性设为False
print(net.training, net.submodel1.training)

print(list(net.named_modules()))

module = nn.Module()
module.param = nn.Parameter(t.ones(2, 2))
print(module._parameters)

submodule1 = nn.Linear(2, 2)
submodule2 = nn.Linear(2, 2)
module_list = [submodule1, submodule2]
# 对于list对象，调用buildin函数，保存在__dict__中
module.submodules = module_list
print('_modules: ', module._modules)
print("__dict__['submodules']:",module.__dict__.get('submodules'))

module_list = nn.ModuleList(module_list)
module.submodules = module_list
print('ModuleList is instance of nn.Module: ', isinstance(module_list, nn.Module))
print('_modules: ', module._modules)
print("__dict__['submodules']:", module.__dict__.get('submodules'))

print(getattr(module, 'training')) # 等价于module.training
# error
# module.__getattr__('training')

module.attr1 = 2
print(getattr(module, 'attr1'))
# 报错
# module.__getattr__('attr1')

# 即module.param, 会调用module.__getattr__('param')
print(getattr(module, 'param'))
