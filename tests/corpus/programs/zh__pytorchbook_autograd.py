# Source: https://github.com/chenyuntc/pytorch-book/blob/master/Chapter3/chapter3.ipynb
# Author: Chen Yun (chenyuntc/pytorch-book, 《深度学习框架PyTorch：入门与实践》); License: MIT
# Edits:
#   - joined the notebook's autograd code cells 86-123 in order, leaving out the three cells that need a CUDA GPU (.cuda(0)) and the three that display grad_fn objects (z.grad_fn, z.grad_fn.next_functions, y.grad_fn.next_functions), whose text holds an address that differs on every run
#   - removed print(z.grad_fn) from the last cell (same reason)
#   - wrapped each cell's final bare expression in print() (as the notebook displays it), except t.set_grad_enabled(True), whose display is an object address
from __future__ import print_function
import torch as t
# 下面两种写法等价
a = t.randn(3,4, requires_grad=True)
# a = t.randn(3, 4).requires_grad_()
print(a.requires_grad)

# 也可以单独设置requires_grad
a = t.randn(3, 4)
a.requires_grad = True

b = t.zeros(3,4).requires_grad_()
c = (a + b).sum()
c.backward()
print(c)

print(a.grad)

# 此处虽然没有指定c需要求导，但c依赖于a，而a需要求导，
# 因此c的requires_grad属性会自动设为True
print(a.requires_grad, b.requires_grad, c.requires_grad)

print(a.is_leaf, b.is_leaf, c.is_leaf)

a = t.rand(10, requires_grad=True)
print(a.is_leaf)

c = t.rand(10, requires_grad=True) + 2
print(c.is_leaf)

def f(x):
    '''计算y'''
    y = x**2 * t.exp(x)
    return y

def gradf(x):
    '''手动求导函数'''
    dx = 2*x*t.exp(x) + x**2*t.exp(x)
    return dx

x = t.randn(3,4, requires_grad = True)
y = f(x)
print(y)

y.backward(t.ones(y.size())) # gradient形状与y一致
print(x.grad)

# autograd的计算结果与利用公式手动计算的结果一致
print(gradf(x)) 

x = t.ones(1)
b = t.rand(1, requires_grad = True)
w = t.rand(1, requires_grad = True)
y = w * x # 等价于y=w.mul(x)
z = y + b # 等价于z=y.add(b)

print(x.requires_grad, b.requires_grad, w.requires_grad)

# 虽然未指定y.requires_grad为True，但由于y依赖于需要求导的w
# 故而y.requires_grad为True
print(y.requires_grad)

# 叶子节点的grad_fn是None
print(w.grad_fn,x.grad_fn)

# 使用retain_graph来保存buffer
z.backward(retain_graph=True)
print(w.grad)

# 多次反向传播，梯度累加，这也就是w中AccumulateGrad标识的含义
z.backward()
print(w.grad)

def abs(x):
    if x.data[0]>0: return x
    else: return -x
x = t.ones(1,requires_grad=True)
y = abs(x)
y.backward()
print(x.grad)

def f(x):
    result = 1
    for ii in x:
        if ii.item()>0: result=ii*result
    return result
x = t.arange(-2,4).float().requires_grad_()
y = f(x) # y = x[3]*x[4]*x[5]
y.backward()
print(x.grad)

x = t.ones(1, requires_grad=True)
w = t.rand(1, requires_grad=True)
y = x * w
# y依赖于w，而w.requires_grad = True
print(x.requires_grad, w.requires_grad, y.requires_grad)

with t.no_grad():
    x = t.ones(1)
    w = t.rand(1, requires_grad = True)
    y = x * w
# y依赖于w和x，虽然w.requires_grad = True，但是y的requires_grad依旧为False
print(x.requires_grad, w.requires_grad, y.requires_grad)

t.set_grad_enabled(False) # 更改了默认设置
x = t.ones(1)
w = t.rand(1, requires_grad = True)
y = x * w
# y依赖于w和x，虽然w.requires_grad = True，但是y的requires_grad依旧为False
print(x.requires_grad, w.requires_grad, y.requires_grad)

# 恢复默认配置
t.set_grad_enabled(True)

a = t.ones(3,4,requires_grad=True)
b = t.ones(3,4,requires_grad=True)
c = a * b

print(a.data) # 还是一个Tensor

print(a.data.requires_grad) # 已经独立于计算图之外了

x = t.ones(3, requires_grad=True)
w = t.rand(3, requires_grad=True)
y = x * w
# y依赖于w，而w.requires_grad = True
z = y.sum()
print(x.requires_grad, w.requires_grad, y.requires_grad)

# 非叶子节点grad计算完之后自动清空，y.grad是None
z.backward()
print((x.grad, w.grad, y.grad))

# 第一种方法：使用grad获取中间变量的梯度
x = t.ones(3, requires_grad=True)
w = t.rand(3, requires_grad=True)
y = x * w
z = y.sum()
# z对y的梯度，隐式调用backward()
print(t.autograd.grad(z, y))

# 第二种方法：使用hook
# hook是一个函数，输入是梯度，不应该有返回值
def variable_hook(grad):
    print('y的梯度：',grad)

x = t.ones(3, requires_grad=True)
w = t.rand(3, requires_grad=True)
y = x * w
# 注册hook
hook_handle = y.register_hook(variable_hook)
z = y.sum()
z.backward()

# 除非你每次都要用hook，否则用完之后记得移除hook
hook_handle.remove()

from torch.autograd import Function
class MultiplyAdd(Function):
                                                            
    @staticmethod
    def forward(ctx, w, x, b):                              
        ctx.save_for_backward(w,x)
        output = w * x + b
        return output
        
    @staticmethod
    def backward(ctx, grad_output):                         
        w,x = ctx.saved_tensors
        grad_w = grad_output * x
        grad_x = grad_output * w
        grad_b = grad_output * 1
        return grad_w, grad_x, grad_b  

x = t.ones(1)
w = t.rand(1, requires_grad = True)
b = t.rand(1, requires_grad = True)
# 开始前向传播
z = MultiplyAdd.apply(w, x, b)
# 开始反向传播
z.backward()

# x不需要求导，中间过程还是会计算它的导数，但随后被清空
print(x.grad, w.grad, b.grad)

x = t.ones(1)
w = t.rand(1, requires_grad = True)
b = t.rand(1, requires_grad = True)
#print('开始前向传播')
z = MultiplyAdd.apply(w,x,b)
#print('开始反向传播')

# 调用MultiplyAdd.backward
# 输出grad_w, grad_x, grad_b
print(z.grad_fn.apply(t.ones(1)))
