# Source: https://github.com/Tomnico-art/pytorch-Deep-learning-practice/blob/main/12_basicRNN.py
# Author: Tomnico-art (Nico), course notes for 刘二大人《PyTorch深度学习实践》 (Bilibili BV1Y7411d7Ys); License: not stated in the repository
# Edits:
#   - none
# Nico
# 时间：2021/9/25 16:56

import torch

# parameters
batch_size = 1
seq_len = 3
input_size = 4
hidden_size = 2
num_layers = 1

cell = torch.nn.RNN(input_size=input_size, hidden_size=hidden_size, num_layers=num_layers)

inputs = torch.randn(seq_len, batch_size, input_size)
hidden = torch.zeros(num_layers, batch_size, hidden_size)

out, hidden = cell(inputs, hidden)

print('Output size:', out.shape)
print('Output:', out)
print('Hidden size: ', hidden.shape)
print('Hidden: ', hidden)
