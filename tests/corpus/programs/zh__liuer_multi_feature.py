# Source: https://github.com/Tomnico-art/pytorch-Deep-learning-practice/blob/main/07_处理多维特征的输入.py
# Author: Tomnico-art (Nico), course notes for 刘二大人《PyTorch深度学习实践》 (Bilibili BV1Y7411d7Ys); License: not stated in the repository
# Edits:
#   - replaced np.loadtxt('diabetes.csv.gz', ...) (759 rows: 8 features scaled to [-1, 1] and a 0/1 label, float32) with a float32 array of the same shape built with torch (uniform features in [-1, 1), random 0/1 labels)
# Nico
# 时间：2021/9/11 15:14

import numpy as np
import torch

# Prepare dataset
xy = torch.cat([torch.rand(759, 8) * 2 - 1, torch.randint(0, 2, (759, 1)).float()], dim=1).numpy()
x_data = torch.from_numpy(xy[:, :-1])
y_data = torch.from_numpy(xy[:, [-1]])

# Design model using Class
class Model(torch.nn.Module):
    def __init__(self):
        super(Model, self).__init__()
        self.linear1 = torch.nn.Linear(8, 6)    # 8维降到6维
        self.linear2 = torch.nn.Linear(6, 4)
        self.linear3 = torch.nn.Linear(4, 1)
        self.sigmoid = torch.nn.Sigmoid()

    def forward(self, x):
        x = self.sigmoid(self.linear1(x))
        x = self.sigmoid(self.linear2(x))
        x = self.sigmoid(self.linear3(x))
        return x

model = Model()

# construct loss and optimizer
criterion = torch.nn.BCELoss(size_average=True)    #交叉熵损失
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

for epoch in range(1000):
    # Forward
    y_pred = model(x_data)
    loss = criterion(y_pred, y_data)
    print(epoch, loss.item())

    # Backward
    optimizer.zero_grad()
    loss.backward()

    # Update
    optimizer.step()
