# Source: https://github.com/CompVis/metric-learning-divide-and-conquer/issues/13
# Author: LUCASDNORONHA (GitHub issue "'_SingleProcessDataLoaderIter' object has no attribute 'next'")
# Edits:
#   - MNIST made in the program (a TensorDataset of torch.rand images and torch.randint labels) instead of torchvision's download; the imports of matplotlib and torchvision left out
# Hint: hint.iterator_next
import numpy as np
import torch
import torch.nn.functional as F
from time import time
from torch import nn, optim

trainset = torch.utils.data.TensorDataset(torch.rand(256, 1, 28, 28), torch.randint(0, 10, (256,)))
trainloader = torch.utils.data.DataLoader(trainset, batch_size=64, shuffle=True) 

valset = torch.utils.data.TensorDataset(torch.rand(64, 1, 28, 28), torch.randint(0, 10, (64,)))
valloader = torch.utils.data.DataLoader(valset, batch_size=64, shuffle=True) 

dataiter = iter(trainloader)
imagens, etiquetas = dataiter.next()
plt.imshow(imagens[0].numpy().squeeze(), cmpap='gray_r');
