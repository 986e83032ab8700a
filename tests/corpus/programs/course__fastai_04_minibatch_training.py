# Source: https://github.com/fastai/course22p2/blob/master/nbs/04_minibatch_training.ipynb
# Author: Jeremy Howard / fast.ai (course22p2, Practical Deep Learning part 2); License: Apache-2.0
# Edits:
#   - code cells joined in notebook order, from the start up to the hand-written Sampler (the later cells need fastcore.all, multiprocessing workers and %time)
#   - removed the #| default_exp nbdev cell, the matplotlib imports, the rcParams line and plt.imshow(xb[0].view(28,28))
#   - replaced the fastcore import of test_close by the definitions of test, is_close and test_close copied from fastcore/test.py (fastai/fastcore; fastcore is not installed)
#   - replaced loading mnist.pkl.gz with in-program random sparse data of the same dtypes and row width (1000 train / 200 valid rows of 784 float32 pixels in [0, 1), about 80% zeros like MNIST; int64 labels)
#   - wrapped each cell's final bare expression in print() (cells whose value is None are left as they are, and so is m1.named_children(), whose repr holds a memory address)
#|export
import pickle,gzip,math,os,time,shutil,torch,numpy as np
from pathlib import Path
from torch import tensor,nn
import torch.nn.functional as F

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

torch.set_printoptions(precision=2, linewidth=140, sci_mode=False)
torch.manual_seed(1)

# in-program stand-in for mnist.pkl.gz: random sparse images (about 80% zero pixels, like MNIST),
# float32 pixels in [0, 1), int64 labels 0-9
x_train = (np.random.rand(1000, 784) * (np.random.rand(1000, 784) < 0.2)).astype(np.float32)
y_train = np.random.randint(0, 10, 1000)
x_valid = (np.random.rand(200, 784) * (np.random.rand(200, 784) < 0.2)).astype(np.float32)
y_valid = np.random.randint(0, 10, 200)
x_train, y_train, x_valid, y_valid = map(tensor, [x_train, y_train, x_valid, y_valid])

n,m = x_train.shape
c = y_train.max()+1
nh = 50

class Model(nn.Module):
    def __init__(self, n_in, nh, n_out):
        super().__init__()
        self.layers = [nn.Linear(n_in,nh), nn.ReLU(), nn.Linear(nh,n_out)]
        
    def __call__(self, x):
        for l in self.layers: x = l(x)
        return x

model = Model(m, nh, 10)
pred = model(x_train)
print(pred.shape)

def log_softmax(x): return (x.exp()/(x.exp().sum(-1,keepdim=True))).log()

print(log_softmax(pred))

def log_softmax(x): return x - x.exp().sum(-1,keepdim=True).log()

def logsumexp(x):
    m = x.max(-1)[0]
    return m + (x-m[:,None]).exp().sum(-1).log()

def log_softmax(x): return x - x.logsumexp(-1,keepdim=True)

test_close(logsumexp(pred), pred.logsumexp(-1))
sm_pred = log_softmax(pred)
print(sm_pred)

print(y_train[:3])

print(sm_pred[0,5],sm_pred[1,0],sm_pred[2,4])

print(sm_pred[[0,1,2], y_train[:3]])

def nll(input, target): return -input[range(target.shape[0]), target].mean()

loss = nll(sm_pred, y_train)
print(loss)

test_close(F.nll_loss(F.log_softmax(pred, -1), y_train), loss, 1e-3)

test_close(F.cross_entropy(pred, y_train), loss, 1e-3)

loss_func = F.cross_entropy

bs=50                  # batch size

xb = x_train[0:bs]     # a mini-batch from x
preds = model(xb)      # predictions
print(preds[0], preds.shape)

yb = y_train[0:bs]
print(yb)

print(loss_func(preds, yb))

print(preds.argmax(dim=1))

#|export
def accuracy(out, yb): return (out.argmax(dim=1)==yb).float().mean()

print(accuracy(preds, yb))

lr = 0.5   # learning rate
epochs = 3 # how many epochs to train for

#|export
def report(loss, preds, yb): print(f'{loss:.2f}, {accuracy(preds, yb):.2f}')

xb,yb = x_train[:bs],y_train[:bs]
preds = model(xb)
report(loss_func(preds, yb), preds, yb)

for epoch in range(epochs):
    for i in range(0, n, bs):
        s = slice(i, min(n,i+bs))
        xb,yb = x_train[s],y_train[s]
        preds = model(xb)
        loss = loss_func(preds, yb)
        loss.backward()
        with torch.no_grad():
            for l in model.layers:
                if hasattr(l, 'weight'):
                    l.weight -= l.weight.grad * lr
                    l.bias   -= l.bias.grad   * lr
                    l.weight.grad.zero_()
                    l.bias  .grad.zero_()
    report(loss, preds, yb)

m1 = nn.Module()
m1.foo = nn.Linear(3,4)
print(m1)

print(list(m1.named_children()))

m1.named_children()

print(list(m1.parameters()))

class MLP(nn.Module):
    def __init__(self, n_in, nh, n_out):
        super().__init__()
        self.l1 = nn.Linear(n_in,nh)
        self.l2 = nn.Linear(nh,n_out)
        self.relu = nn.ReLU()
        
    def forward(self, x): return self.l2(self.relu(self.l1(x)))

model = MLP(m, nh, 10)
print(model.l1)

print(model)

for name,l in model.named_children(): print(f"{name}: {l}")

for p in model.parameters(): print(p.shape)

def fit():
    for epoch in range(epochs):
        for i in range(0, n, bs):
            s = slice(i, min(n,i+bs))
            xb,yb = x_train[s],y_train[s]
            preds = model(xb)
            loss = loss_func(preds, yb)
            loss.backward()
            with torch.no_grad():
                for p in model.parameters(): p -= p.grad * lr
                model.zero_grad()
        report(loss, preds, yb)

fit()

class MyModule:
    def __init__(self, n_in, nh, n_out):
        self._modules = {}
        self.l1 = nn.Linear(n_in,nh)
        self.l2 = nn.Linear(nh,n_out)

    def __setattr__(self,k,v):
        if not k.startswith("_"): self._modules[k] = v
        super().__setattr__(k,v)

    def __repr__(self): return f'{self._modules}'
    
    def parameters(self):
        for l in self._modules.values(): yield from l.parameters()

mdl = MyModule(m,nh,10)
print(mdl)

for p in mdl.parameters(): print(p.shape)

from functools import reduce

layers = [nn.Linear(m,nh), nn.ReLU(), nn.Linear(nh,10)]

class Model(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.layers = layers
        for i,l in enumerate(self.layers): self.add_module(f'layer_{i}', l)

    def forward(self, x): return reduce(lambda val,layer: layer(val), self.layers, x)

model = Model(layers)
print(model)

print(model(xb).shape)

class SequentialModel(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.layers = nn.ModuleList(layers)
        
    def forward(self, x):
        for l in self.layers: x = l(x)
        return x

model = SequentialModel(layers)
print(model)

fit()

model = nn.Sequential(nn.Linear(m,nh), nn.ReLU(), nn.Linear(nh,10))

fit()
print(loss_func(model(xb), yb), accuracy(model(xb), yb))

print(model)

class Optimizer():
    def __init__(self, params, lr=0.5): self.params,self.lr=list(params),lr

    def step(self):
        with torch.no_grad():
            for p in self.params: p -= p.grad * self.lr

    def zero_grad(self):
        for p in self.params: p.grad.data.zero_()

model = nn.Sequential(nn.Linear(m,nh), nn.ReLU(), nn.Linear(nh,10))

opt = Optimizer(model.parameters())

for epoch in range(epochs):
    for i in range(0, n, bs):
        s = slice(i, min(n,i+bs))
        xb,yb = x_train[s],y_train[s]
        preds = model(xb)
        loss = loss_func(preds, yb)
        loss.backward()
        opt.step()
        opt.zero_grad()
    report(loss, preds, yb)

from torch import optim

def get_model():
    model = nn.Sequential(nn.Linear(m,nh), nn.ReLU(), nn.Linear(nh,10))
    return model, optim.SGD(model.parameters(), lr=lr)

model,opt = get_model()
print(loss_func(model(xb), yb))

for epoch in range(epochs):
    for i in range(0, n, bs):
        s = slice(i, min(n,i+bs))
        xb,yb = x_train[s],y_train[s]
        preds = model(xb)
        loss = loss_func(preds, yb)
        loss.backward()
        opt.step()
        opt.zero_grad()
    report(loss, preds, yb)

#|export
class Dataset():
    def __init__(self, x, y): self.x,self.y = x,y
    def __len__(self): return len(self.x)
    def __getitem__(self, i): return self.x[i],self.y[i]

train_ds,valid_ds = Dataset(x_train, y_train),Dataset(x_valid, y_valid)
assert len(train_ds)==len(x_train)
assert len(valid_ds)==len(x_valid)

xb,yb = train_ds[0:5]
assert xb.shape==(5,28*28)
assert yb.shape==(5,)
print(xb,yb)

model,opt = get_model()

for epoch in range(epochs):
    for i in range(0, n, bs):
        xb,yb = train_ds[i:min(n,i+bs)]
        preds = model(xb)
        loss = loss_func(preds, yb)
        loss.backward()
        opt.step()
        opt.zero_grad()
    report(loss, preds, yb)

class DataLoader():
    def __init__(self, ds, bs): self.ds,self.bs = ds,bs
    def __iter__(self):
        for i in range(0, len(self.ds), self.bs): yield self.ds[i:i+self.bs]

train_dl = DataLoader(train_ds, bs)
valid_dl = DataLoader(valid_ds, bs)

xb,yb = next(iter(valid_dl))
print(xb.shape)

print(yb)

print(yb[0])

model,opt = get_model()

def fit():
    for epoch in range(epochs):
        for xb,yb in train_dl:
            preds = model(xb)
            loss = loss_func(preds, yb)
            loss.backward()
            opt.step()
            opt.zero_grad()
        report(loss, preds, yb)

fit()
print(loss_func(model(xb), yb), accuracy(model(xb), yb))

import random

class Sampler():
    def __init__(self, ds, shuffle=False): self.n,self.shuffle = len(ds),shuffle
    def __iter__(self):
        res = list(range(self.n))
        if self.shuffle: random.shuffle(res)
        return iter(res)

from itertools import islice

ss = Sampler(train_ds)

it = iter(ss)
for o in range(5): print(next(it))

print(list(islice(ss, 5)))

ss = Sampler(train_ds, shuffle=True)
print(list(islice(ss, 5)))
