# Source: https://youtu.be/VbqNn20FoHM
# Author: NTU ML 2022 Spring (Hung-yi Lee's course), "Pytorch Tutorial 2" notebook, common error "4. mismatched tensor type", the cell that raises (learners' copies of the notebook carry the video link above)
# Edits:
#   - the notebook's first cell (import torch) kept, the cells between left out
# Hint: hint.indices_long
import torch

# 4. mismatched tensor type
import torch.nn as nn
L = nn.CrossEntropyLoss()
outs = torch.randn(5,5)
labels = torch.Tensor([1,2,3,4,0])
lossval = L(outs,labels) # Calculate CrossEntropyLoss between outs and labels
