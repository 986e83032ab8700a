# Source: https://github.com/dyhBUPT/StrongSORT/pull/66
# Author: kadirnar (GitHub pull request "Updated numpy float codes."), the example of what fails
# Edits:
#   - none
# Hint: hint.numpy_removed
import numpy as np

# Instead of numpy's float alias
x = np.float(10)
