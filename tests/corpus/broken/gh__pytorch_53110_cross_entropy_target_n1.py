# Source: https://github.com/pytorch/pytorch/pull/53110
# Author: thomasjpfan (GitHub pull request "FIX Validates target in cosine_embedding"), its example of cross_entropy
# Edits:
#   - none
# Hint: hint.class_target_shape
import torch
import torch.nn.functional as F

input = torch.randn(3, 5, requires_grad=True)
target = torch.randint(5, (3, 1))

# Raises RuntimeError
loss = F.cross_entropy(input, target)
