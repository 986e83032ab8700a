# Source: https://github.com/yxonic/notes/blob/d634635bf1fbb904939aace42b2e8ac5aea9b3c1/notes/python_project.ipynb
# Author: yxonic (yxonic/notes, a learner's notebook on nn.Embedding; the error is recorded in it)
# Edits:
#   - the notebook's code cells in order, up to the one that failed
# Hint: hint.target_out_of_range
import torch
import torch.nn as nn

emb = nn.Embedding(10, 3)
emb.weight

emb(torch.LongTensor([0]))

emb(torch.LongTensor([1]))

emb(torch.LongTensor([10]))
