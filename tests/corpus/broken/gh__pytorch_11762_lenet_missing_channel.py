# Source: https://github.com/pytorch/pytorch/issues/11762
# Author: justinkterry (GitHub issue "Incredibly unhelpful error message for giving missing channels to conv2d layer")
# Edits:
#   - the imports, and the call the issue describes: a batch of 64 images of 32x32 without their channel dimension, made with torch.randn
# Hint: hint.shape_mismatch
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1   = nn.Linear(16*5*5, 120)
        self.fc2   = nn.Linear(120, 84)
        self.fc3   = nn.Linear(84, 10)

    def forward(self, x):
        out = self.conv1(x)
        out = F.relu(out)
        out = F.max_pool2d(out, 2)
        out = F.relu(self.conv2(out))
        out = F.max_pool2d(out, 2)
        out = out.view(out.size(0), -1)
        out = F.relu(self.fc1(out))
        out = F.relu(self.fc2(out))
        out = self.fc3(out)
        return out


net = Net()
x = torch.randn(64, 32, 32)
out = net(x)
