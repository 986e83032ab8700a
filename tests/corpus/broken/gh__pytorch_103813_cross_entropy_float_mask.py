# Source: https://github.com/pytorch/pytorch/issues/103813
# Author: umang299 (GitHub issue "torch.nn.CrossEntropyLoss"), the reproduction in their second comment: a segmentation's predicted masks against Float ground-truth masks
# Edits:
#   - `import torch` added at the top: the snippet takes it as imported
# Hint: hint.indices_long
import torch

criterion = torch.nn.CrossEntropyLoss()
preds = torch.randn((4, 59, 256, 256), dtype=torch.float32)
labels = torch.randn((4, 256, 256), dtype=torch.float32)

loss = criterion(preds, labels)
