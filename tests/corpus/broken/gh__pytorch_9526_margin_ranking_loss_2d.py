# Source: https://github.com/pytorch/pytorch/issues/9526
# Author: marchbnr (GitHub issue "MarginRankingLoss with multiple examples per batch is broken")
# Edits:
#   - none
# Hint: hint.ranking_target
import torch
import torch.nn as nn
x1 = torch.ones(64, 128)
x2 = torch.ones(64, 128)
target = torch.ones(64)
loss = nn.MarginRankingLoss(margin=1.0).forward(x1, x2, target)
