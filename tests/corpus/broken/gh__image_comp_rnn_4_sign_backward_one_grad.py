# Source: https://github.com/1zb/pytorch-image-comp-rnn/issues/4
# Author: sihuiluo (issue #4, 23 Dec 2017), running the repository's train.py at commit ff3caae; the function is 1zb's functions/sign.py at that commit
# Edits:
#   - functions/sign.py, modules/sign.py and network.py's Binarizer at commit ff3caae copied into one file; `from functions import Sign as SignFunction` becomes `SignFunction = Sign`
#   - train.py's encoder, decoder, data loader and CUDA calls replaced by torch.randn codes of the shape the encoder gives; the loss is computed as in train.py (res.abs().mean(), then loss.backward())
# Hint: hint.function_backward
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Function


class Sign(Function):
    """
    Variable Rate Image Compression with Recurrent Neural Networks
    https://arxiv.org/abs/1511.06085
    """

    def __init__(self):
        super(Sign, self).__init__()

    @staticmethod
    def forward(ctx, input, is_training=True):
        # Apply quantization noise while only training
        if is_training:
            prob = input.new(input.size()).uniform_()
            x = input.clone()
            x[(1 - input) / 2 <= prob] = 1
            x[(1 - input) / 2 > prob] = -1
            return x
        else:
            return input.sign()

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


SignFunction = Sign


class Sign(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return SignFunction.apply(x, self.training)


class Binarizer(nn.Module):
    def __init__(self):
        super(Binarizer, self).__init__()
        self.conv = nn.Conv2d(512, 32, kernel_size=1, bias=False)
        self.sign = Sign()

    def forward(self, input):
        feat = self.conv(input)
        x = F.tanh(feat)
        return self.sign(x)


binarizer = Binarizer()
encoded = torch.randn(4, 512, 2, 2)
codes = binarizer(encoded)
res = encoded[:, :32] - codes
loss = res.abs().mean()
loss.backward()
