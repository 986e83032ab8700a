# Source: https://duoke360.com/post/35061
# Author: the page "PyTorch运行时错误 - 张量的元素0不需要grad且没有grad_fn" (duoke360.com), its example 3, "模型参数未正确注册"
# Edits:
#   - the import added (the page imports torch in its first example)
# Hint: hint.no_grad_fn
import torch

model = torch.nn.Linear(1, 1)
for param in model.parameters():
    param.requires_grad = False # 禁用所有参数梯度
out = model(torch.tensor([1.0]))
out.backward() # 错误!参数不需要梯度
