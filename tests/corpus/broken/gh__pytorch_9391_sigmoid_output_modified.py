# Source: https://github.com/pytorch/pytorch/issues/9391
# Author: anshulpaigwar (GitHub issue "backward pass different behaviors with inplace operation"), its first example
# Edits:
#   - the interpreter's >>> prompts and its echoed outputs left out; `import torch` added
# Hint: hint.inplace_modified
import torch
a = torch.tensor([1,2,3.], requires_grad = True)
b = a.sigmoid()
b
b[1]= 2
b.sum().backward()
