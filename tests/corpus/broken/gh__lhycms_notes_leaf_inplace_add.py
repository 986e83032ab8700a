# Source: https://github.com/lhycms/Deep_Learning_Notes/blob/cf350f369e268e561265cc4701271a6100ff17b7/1.Basic/b%E7%AB%99%E5%9F%BA%E7%A1%80/Untitled%20Folder/%E6%9C%AA%E5%91%BD%E5%90%8D.ipynb
# Author: lhycms (Deep_Learning_Notes, a learner's notebook; the error is recorded in it)
# Edits:
#   - the notebook's code cells in order, up to the one that failed
# Hint: hint.inplace_leaf
import torch

# For example

# leaf variable
w = torch.tensor([1.0, 2.0, 3.0])

# also leaf variable
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True) 

# not a leaf variable
y = x + 1

print(w.is_leaf, x.is_leaf, y.is_leaf)

x += 1  # in-place
y = x + 1 # not in place
