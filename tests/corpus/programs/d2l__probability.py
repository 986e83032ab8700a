# Source: https://github.com/d2l-ai/d2l-en/blob/master/chapter_preliminaries/probability.md
# Author: Aston Zhang, Zachary C. Lipton, Mu Li, Alexander J. Smola (d2l-ai/d2l-en); License: sample code MIT-0 (LICENSE-SAMPLECODE), text CC BY-SA 4.0
# Edits:
#   - joined the first five PyTorch code cells of the page in order (the sixth only plots the running estimates)
#   - removed %matplotlib inline and the unused 'from d2l import torch as d2l'
#   - wrapped each cell's final bare expression in print() (as the notebook displays it)
import random
import torch
from torch.distributions.multinomial import Multinomial

num_tosses = 100
heads = sum([random.random() > 0.5 for _ in range(num_tosses)])
tails = num_tosses - heads
print("heads, tails: ", [heads, tails])

fair_probs = torch.tensor([0.5, 0.5])
print(Multinomial(100, fair_probs).sample())

print(Multinomial(100, fair_probs).sample() / 100)

counts = Multinomial(10000, fair_probs).sample()
print(counts / 10000)
