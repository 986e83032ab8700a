# Source: https://github.com/zergtant/pytorch-handbook/blob/master/chapter2/2.1.2-pytorch-basics-autograd.ipynb
# Author: zergtant (pytorch-handbook, PyTorch 中文手册); License: CC BY-NC-SA 3.0 CN
# Edits:
#   - joined the notebook's code cells in order, leaving out the cells whose output is an object address or id() (z.grad_fn, z.grad_fn.next_functions, the two id prints), which differ on every run
#   - wrapped each cell's final bare expression in print() (as the notebook displays it)
import torch
print(torch.__version__)

x = torch.rand(5, 5, requires_grad=True)
print(x)

y = torch.rand(5, 5, requires_grad=True)
print(y)

z=torch.sum(x+y)
print(z)

z.backward()
print(x.grad,y.grad)

x = torch.rand(5, 5, requires_grad=True)
y = torch.rand(5, 5, requires_grad=True)
z= x**2+y**3
print(z)

#我们的返回值不是一个标量，所以需要输入一个大小相同的张量作为参数，这里我们用ones_like函数根据x生成一个张量
z.backward(torch.ones_like(x))
print(x.grad)

with torch.no_grad():
    print((x +y*2).requires_grad)

print(dir(z))

print("x.is_leaf="+str(x.is_leaf))
print("z.is_leaf="+str(z.is_leaf))

print(dir(z.grad_fn))

xg = z.grad_fn.next_functions[0][0]
print(dir(xg))

x_leaf=xg.next_functions[0][0]
print(type(x_leaf))

print(x_leaf.variable)

assert(id(x_leaf.variable)==id(x))

# 引入Function便于扩展
from torch.autograd.function import Function

# 定义一个乘以常数的操作(输入参数是张量)
# 方法必须是静态方法，所以要加上@staticmethod 
class MulConstant(Function):
    @staticmethod 
    def forward(ctx, tensor, constant):
        # ctx 用来保存信息这里类似self，并且ctx的属性可以在backward中调用
        ctx.constant=constant
        return tensor *constant
    @staticmethod
    def backward(ctx, grad_output):
        # 返回的参数要与输入的参数一样.
        # 第一个输入为3x3的张量，第二个为一个常数
        # 常数的梯度必须是 None.
        return grad_output, None 

a=torch.rand(3,3,requires_grad=True)
b=MulConstant.apply(a,5)
print("a:"+str(a))
print("b:"+str(b)) # b为a的元素乘以5

print(b.backward(torch.ones_like(a)))

print(a.grad)
