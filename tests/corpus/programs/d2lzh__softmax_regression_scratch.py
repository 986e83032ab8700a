# Source: https://github.com/d2l-ai/d2l-zh/blob/master/chapter_linear-networks/softmax-regression-scratch.md
# Author: Aston Zhang, Zachary C. Lipton, Mu Li, Alexander J. Smola (d2l-ai/d2l-zh); License: Apache-2.0
# Edits:
#   - joined the PyTorch code cells of the page in order, up to evaluate_accuracy(net, test_iter) (the training cells after it plot with Animator and assert Fashion-MNIST accuracies)
#   - wrapped each cell's final bare expression in print() (as the notebook displays it)
#   - replaced 'from d2l import torch as d2l' and 'from IPython import display' with a small class d2l holding aliases copied from d2l/torch.py
#   - replaced d2l.load_data_fashion_mnist(batch_size) with DataLoaders over 512 random 1x28x28 images and random labels in 0..9
import torch
# --- copied from d2l/torch.py ---
class d2l:
    tensor = torch.tensor
    reduce_sum = lambda x, *args, **kwargs: x.sum(*args, **kwargs)
    exp = torch.exp
    normal = torch.normal
    matmul = torch.matmul
    reshape = lambda x, *args, **kwargs: x.reshape(*args, **kwargs)
    log = torch.log
    argmax = lambda x, *args, **kwargs: x.argmax(*args, **kwargs)
    astype = lambda x, *args, **kwargs: x.type(*args, **kwargs)
    size = lambda x, *args, **kwargs: x.numel(*args, **kwargs)
# --- end of copy ---

batch_size = 256
from torch.utils import data
train_iter = data.DataLoader(data.TensorDataset(torch.rand(512, 1, 28, 28), torch.randint(0, 10, (512,))), batch_size, shuffle=True)
test_iter = data.DataLoader(data.TensorDataset(torch.rand(512, 1, 28, 28), torch.randint(0, 10, (512,))), batch_size, shuffle=False)

num_inputs = 784
num_outputs = 10

W = torch.normal(0, 0.01, size=(num_inputs, num_outputs), requires_grad=True)
b = torch.zeros(num_outputs, requires_grad=True)

X = d2l.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
print(d2l.reduce_sum(X, 0, keepdim=True), d2l.reduce_sum(X, 1, keepdim=True))

def softmax(X):
    X_exp = d2l.exp(X)
    partition = d2l.reduce_sum(X_exp, 1, keepdim=True)
    return X_exp / partition  # 这里应用了广播机制

X = d2l.normal(0, 1, (2, 5))
X_prob = softmax(X)
print(X_prob, d2l.reduce_sum(X_prob, 1))

def net(X):
    return softmax(d2l.matmul(d2l.reshape(X, (-1, W.shape[0])), W) + b)

y = d2l.tensor([0, 2])
y_hat = d2l.tensor([[0.1, 0.3, 0.6], [0.3, 0.2, 0.5]])
print(y_hat[[0, 1], y])

def cross_entropy(y_hat, y):
    return - d2l.log(y_hat[range(len(y_hat)), y])

print(cross_entropy(y_hat, y))

def accuracy(y_hat, y):  #@save
    """计算预测正确的数量"""
    if len(y_hat.shape) > 1 and y_hat.shape[1] > 1:
        y_hat = d2l.argmax(y_hat, axis=1)
    cmp = d2l.astype(y_hat, y.dtype) == y
    return float(d2l.reduce_sum(d2l.astype(cmp, y.dtype)))

print(accuracy(y_hat, y) / len(y))

def evaluate_accuracy(net, data_iter):  #@save
    """计算在指定数据集上模型的精度"""
    if isinstance(net, torch.nn.Module):
        net.eval()  # 将模型设置为评估模式
    metric = Accumulator(2)  # 正确预测数、预测总数
    with torch.no_grad():
        for X, y in data_iter:
            metric.add(accuracy(net(X), y), d2l.size(y))
    return metric[0] / metric[1]

class Accumulator:  #@save
    """在n个变量上累加"""
    def __init__(self, n):
        self.data = [0.0] * n

    def add(self, *args):
        self.data = [a + float(b) for a, b in zip(self.data, args)]

    def reset(self):
        self.data = [0.0] * len(self.data)

    def __getitem__(self, idx):
        return self.data[idx]

print(evaluate_accuracy(net, test_iter))
