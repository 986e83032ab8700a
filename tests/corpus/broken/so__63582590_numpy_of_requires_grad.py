# Source: https://stackoverflow.com/questions/63582590/why-do-we-call-detach-before-calling-numpy-on-a-pytorch-tensor
# Author: the asker of Stack Overflow question 63582590 ("Why do we call .detach() before calling .numpy() on a Pytorch Tensor?"), the example given in the question
# Edits:
#   - none: the example as posted
# Hint: hint.numpy_requires_grad
import torch

tensor1 = torch.tensor([1.0,2.0],requires_grad=True)


tensor1 = tensor1.numpy()
