# Source: https://github.com/fastai/course22p2/blob/master/nbs/01_matmul.ipynb
# Author: Jeremy Howard / fast.ai (course22p2, Practical Deep Learning part 2); License: Apache-2.0
# Edits:
#   - code cells joined in notebook order, keeping the pure-Python and PyTorch cells listed in the edits below
#   - removed the matplotlib imports and every plotting cell (plt.imshow / plt.plot / plt.hist)
#   - removed the download cells (Path("data").mkdir, urlretrieve, !ls -l data)
#   - replaced loading mnist.pkl.gz with in-program random sparse data of the same dtypes and row width (1000 train / 200 valid rows of 784 float32 pixels in [0, 1), about 80% zeros like MNIST; int64 labels)
#   - removed the two os.fork() cells (no subprocesses)
#   - m1 = x_valid[:5] -> x_valid[:2] (the pure-Python triple-loop matmuls run 2*10*784 steps instead of 5*10*784)
#   - removed the %time / %timeit cells, the numba cells (njit dot and its matmul) and the numba.cuda / .cuda() cells
#   - replaced the fastcore import of test_close by the definitions of test, is_close and test_close copied from fastcore/test.py (fastai/fastcore; fastcore is not installed) (in place of "from fastcore.test import *")
#   - wrapped each kept cell's final bare expression in print(), except islice(it, 5), whose repr holds a memory address (cells whose value is None, which a notebook does not display, are left as they are)
from pathlib import Path
import pickle, gzip, math, os, time, shutil

# in-program stand-in for mnist.pkl.gz: random sparse images (about 80% zero pixels, like MNIST),
# float32 pixels in [0, 1), int64 labels 0-9
import numpy as np
x_train = (np.random.rand(1000, 784) * (np.random.rand(1000, 784) < 0.2)).astype(np.float32)
y_train = np.random.randint(0, 10, 1000)
x_valid = (np.random.rand(200, 784) * (np.random.rand(200, 784) < 0.2)).astype(np.float32)
y_valid = np.random.randint(0, 10, 200)

lst1 = list(x_train[0])
vals = lst1[200:210]
print(vals)

def chunks(x, sz):
    for i in range(0, len(x), sz): yield x[i:i+sz]

print(list(chunks(vals, 5)))

from itertools import islice

it = iter(vals)
islice(it, 5)

print(list(islice(it, 5)))

print(list(islice(it, 5)))

print(list(islice(it, 5)))

it = iter(lst1)
img = list(iter(lambda: list(islice(it, 28)), []))

print(img[20][15])

class Matrix:
    def __init__(self, xs): self.xs = xs
    def __getitem__(self, idxs): return self.xs[idxs[0]][idxs[1]]

m = Matrix(img)
print(m[20,15])

import torch
from torch import tensor

print(tensor([1,2,3]))

x_train,y_train,x_valid,y_valid = map(tensor, (x_train,y_train,x_valid,y_valid))
print(x_train.shape)

print(x_train.type())

imgs = x_train.reshape((-1,28,28))
print(imgs.shape)

print(imgs[0,20,15])

n,c = x_train.shape
print(y_train, y_train.shape)

print(min(y_train),max(y_train))

print(y_train.min(), y_train.max())

rnd_state = None
def seed(a):
    global rnd_state
    a, x = divmod(a, 30268)
    a, y = divmod(a, 30306)
    a, z = divmod(a, 30322)
    rnd_state = int(x)+1, int(y)+1, int(z)+1

seed(457428938475)
print(rnd_state)

def rand():
    global rnd_state
    x, y, z = rnd_state
    x = (171 * x) % 30269
    y = (172 * y) % 30307
    z = (170 * z) % 30323
    rnd_state = x,y,z
    return (x/30269 + y/30307 + z/30323) % 1.0

print(rand(),rand(),rand())

torch.manual_seed(1)
weights = torch.randn(784,10)
bias = torch.zeros(10)

m1 = x_valid[:2]
m2 = weights

print(m1.shape,m2.shape)

ar,ac = m1.shape # n_rows * n_cols
br,bc = m2.shape
print((ar,ac),(br,bc))

t1 = torch.zeros(ar, bc)
print(t1.shape)

for i in range(ar):         # 5
    for j in range(bc):     # 10
        for k in range(ac): # 784
            t1[i,j] += m1[i,k] * m2[k,j]

print(t1)

print(t1.shape)

torch.set_printoptions(precision=2, linewidth=140, sci_mode=False)
print(t1)

import numpy as np
np.set_printoptions(precision=2, linewidth=140)

def matmul(a,b):
    (ar,ac),(br,bc) = a.shape,b.shape
    c = torch.zeros(ar, bc)
    for i in range(ar):
        for j in range(bc):
            for k in range(ac): c[i,j] += a[i,k] * b[k,j]
    return c

print(ar*bc*ac)

# ---- test_close and its helpers, copied from fastcore/test.py (fastai/fastcore, Apache-2.0) ----
from typing import Iterable,Generator
from functools import partial

def test(a, b, cmp, cname=None):
    "`assert` that `cmp(a,b)`; display inputs and `cname or cmp.__name__` if it fails"
    if cname is None: cname=cmp.__name__
    assert cmp(a,b),f"{cname}:\n{a}\n{b}"

def is_close(a,b,eps=1e-5):
    "Is `a` within `eps` of `b`"
    if hasattr(a, '__array__') or hasattr(b,'__array__'):
        return (abs(a-b)<eps).all()
    if isinstance(a, (Iterable,Generator)) or isinstance(b, (Iterable,Generator)):
        return all(abs(a_-b_)<eps for a_,b_ in zip(a,b))
    return abs(a-b)<eps

def test_close(a,b,eps=1e-5):
    "`test` that `a` is within `eps` of `b`"
    test(a,b,partial(is_close,eps=eps),'close')
# ---- end of fastcore/test.py excerpt ----

a = tensor([10., 6, -4])
b = tensor([2., 8, 7])
print(a,b)

print(a + b)

print((a < b).float().mean())

m = tensor([[1., 2, 3], [4,5,6], [7,8,9]]); print(m)

sf = (m*m).sum()
print(sf)

print(sf.sqrt())

print(m[2,:],m[:,2])

print(m[2])

def matmul(a,b):
    (ar,ac),(br,bc) = a.shape,b.shape
    c = torch.zeros(ar, bc)
    for i in range(ar):
        for j in range(bc): c[i,j] = (a[i,:] * b[:,j]).sum()
    return c

test_close(t1,matmul(m1, m2))

def matmul(a,b):
    (ar,ac),(br,bc) = a.shape,b.shape
    c = torch.zeros(ar, bc)
    for i in range(ar):
        for j in range(bc): c[i,j] = torch.dot(a[i,:], b[:,j])
    return c

test_close(t1,matmul(m1, m2))

print(a)

print(a > 0)

print(a + 1)

print(m)

print(2*m)

c = tensor([10.,20,30]); print(c)

print(m)

print(m.shape,c.shape)

print(m + c)

print(c + m)

t = c.expand_as(m)

print(t)

print(m + t)

print(t.storage())

print(t.stride(), t.shape)

print(c.unsqueeze(0), c[None, :])

print(c.shape, c.unsqueeze(0).shape)

print(c.unsqueeze(1), c[:, None])

print(c.shape, c.unsqueeze(1).shape)

print(c[None].shape,c[...,None].shape)

print(c[:,None].expand_as(m))

print(m + c[:,None])

print(m + c[None,:])

print(c[None,:])

print(c[None,:].shape)

print(c[:,None])

print(c[:,None].shape)

print(c[None,:] * c[:,None])

print(c[None] > c[:,None])

print(m*m)

digit = m1[0]
print(digit.shape,m2.shape)

print(digit[:,None].shape)

print(digit[:,None].expand_as(m2).shape)

print((digit[:,None]*m2).shape)

def matmul(a,b):
    (ar,ac),(br,bc) = a.shape,b.shape
    c = torch.zeros(ar, bc)
    for i in range(ar):
#       c[i,j] = (a[i,:] * b[:,j]).sum()      # previous version
        c[i]   = (a[i,:,None] * b).sum(dim=0) # broadcast version
    return c

test_close(t1,matmul(m1, m2))

tr = matmul(x_train, weights)
print(tr)

print(tr.shape)

print(m1.shape,m2.shape)

# c[i,j] += a[i,k] * b[k,j]
# c[i,j] = (a[i,:] * b[:,j]).sum()
mr = torch.einsum('ik,kj->ikj', m1, m2)
print(mr.shape)

print(mr.sum(1))

print(torch.einsum('ik,kj->ij', m1, m2))

def matmul(a,b): return torch.einsum('ik,kj->ij', a, b)

test_close(tr, matmul(x_train, weights), eps=1e-3)

test_close(tr, x_train@weights, eps=1e-3)

def matmul(grid, a,b,c):
    i,j = grid
    if i < c.shape[0] and j < c.shape[1]:
        tmp = 0.
        for k in range(a.shape[1]): tmp += a[i, k] * b[k, j]
        c[i,j] = tmp

res = torch.zeros(ar, bc)
matmul((0,0), m1, m2, res)
print(res)

def launch_kernel(kernel, grid_x, grid_y, *args, **kwargs):
    for i in range(grid_x):
        for j in range(grid_y): kernel((i,j), *args, **kwargs)

res = torch.zeros(ar, bc)
launch_kernel(matmul, ar, bc, m1, m2, res)
print(res)
