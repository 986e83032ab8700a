# Source: https://github.com/pytorch/pytorch/issues/11305
# Author: cod3licious (issue #11305, "ReduceLROnPlateau has a weird dependence on patience", 5 Sep 2018), written for PyTorch 0.4, where verbose= was still accepted
# Edits:
#   - the two imports the snippet relies on (torch.nn as nn, torch.optim as optim) added above it
# Hint: hint.scheduler_verbose
import torch.nn as nn
import torch.optim as optim

model = nn.Linear(10, 2)
optimizer = optim.Adam(model.parameters(), lr=1e-3)
scheduler = optim.lr_scheduler.ReduceLROnPlateau(
    optimizer, patience=0, verbose=True)

test_loss = [301427.7770613, 160481.1660669, 117763.6467930, 81528.4339311, 61726.3664427, 46429.0652291, 35138.6479489, 23490.1695382, 17156.3515503, 13263.6756480, 10980.2816269, 11231.1720589, 7322.0585567, 9150.4534486, 12504.9455976, 10636.9359541, 8429.2563446, 5167.7016573, 7893.0735840, 7127.2575889, 8848.1689746, 7766.2236686, 8599.2677275, 9155.7630087, 7540.2192680]

for i in test_loss:
    print('loss: ', i)
    scheduler.step(i)
