# Source: https://github.com/lhycms/Deep_Learning_Notes/blob/cf350f369e268e561265cc4701271a6100ff17b7/1.Basic/b%E7%AB%99%E5%9F%BA%E7%A1%80/Untitled.ipynb
# Author: lhycms (Deep_Learning_Notes, a learner's notebook; the error is recorded in it)
# Edits:
#   - the notebook's code cells in order, up to the one that failed
# Hint: hint.scalar_backward
import torch

if torch.cuda.is_available():
    device = torch.device("cuda")
    x = torch.tensor([1., 2., 3.], device=device,requires_grad=True)
    print(1)
else:
    x = torch.tensor([1., 2., 3.], requires_grad=True)

y = x + 2
print(y)

z = y * y * 2
print(z)

z = z.mean()
print(z)

z.backward()
print(x.grad)

x = torch.tensor([1., 2., 3.], requires_grad=True)
y = x + 2
z = y * y * 2

z.backward()
z.grad
