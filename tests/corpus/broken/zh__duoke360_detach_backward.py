# Source: https://duoke360.com/post/35061
# Author: the page "PyTorch运行时错误 - 张量的元素0不需要grad且没有grad_fn" (duoke360.com), its example 2, "计算图断裂"
# Edits:
#   - the import added (the page imports torch in its first example)
# Hint: hint.no_grad_fn
import torch

x = torch.tensor([1.0], requires_grad=True)
y = x.detach() # 切断计算图
z = y * 2
z.backward() # 错误!y已脱离计算图
