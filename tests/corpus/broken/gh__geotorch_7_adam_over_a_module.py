# Source: https://github.com/lezcano/geotorch/issues/7
# Author: kfallah (GitHub issue "ParametrizedLinear not Recognized as Tensor by Adam")
# Edits:
#   - the imports, and X made with torch.randn (the issue does not show it)
#   - `geotorch.orthogonal(R, "weight")` left out: geotorch is not installed here, and Adam refuses the module either way
# Hint: hint.module_not_parameters
import torch
import torch.nn as nn

X = torch.randn(16, 4)
R = nn.Linear(X.shape[1], X.shape[1])
optim = torch.optim.Adam([R], lr=1e-1)
