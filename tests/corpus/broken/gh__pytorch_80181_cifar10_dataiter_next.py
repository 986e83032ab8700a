# Source: https://github.com/pytorch/tutorials/blob/04e3d04bcf91d38a1213918eba70dc43e9b0ce45/beginner_source/blitz/cifar10_tutorial.py
# Author: the 60 Minute Blitz's "Training a Classifier" (pytorch/tutorials; BSD-3-Clause), as xiaoyu-work ran it and reported: https://github.com/pytorch/pytorch/issues/80181
# Edits:
#   - the tutorial's code up to the lines after the one that fails (the rest never runs), its prose left out
#   - CIFAR10 made in the program (TensorDatasets of 40 torch.randn images and torch.randint labels) instead of torchvision's download, so the transforms and the torchvision and matplotlib imports are left out
#   - the loaders' num_workers=2 left out: the lab runs no worker processes
# Hint: hint.iterator_next
import torch

########################################################################
# The output of torchvision datasets are PILImage images of range [0, 1].
# We transform them to Tensors of normalized range [-1, 1].

trainset = torch.utils.data.TensorDataset(torch.randn(40, 3, 32, 32), torch.randint(0, 10, (40,)))
trainloader = torch.utils.data.DataLoader(trainset, batch_size=4,
                                          shuffle=True)

testset = torch.utils.data.TensorDataset(torch.randn(40, 3, 32, 32), torch.randint(0, 10, (40,)))
testloader = torch.utils.data.DataLoader(testset, batch_size=4,
                                         shuffle=False)

classes = ('plane', 'car', 'bird', 'cat',
           'deer', 'dog', 'frog', 'horse', 'ship', 'truck')

########################################################################
# Let us show some of the training images, for fun.

import numpy as np

# functions to show an image


def imshow(img):
    img = img / 2 + 0.5     # unnormalize
    npimg = img.numpy()
    plt.imshow(np.transpose(npimg, (1, 2, 0)))
    plt.show()


# get some random training images
dataiter = iter(trainloader)
images, labels = dataiter.next()

# show images
imshow(torchvision.utils.make_grid(images))
# print labels
print(' '.join('%5s' % classes[labels[j]] for j in range(4)))
