# Source: https://github.com/halide/Halide/issues/8380
# Author: alexreinking (GitHub issue "python_tutorial_lesson_10_aot_compilation_run incompatible with Numpy 2"), the lesson's lines it quotes
# Edits:
#   - `import numpy as np` added above the lines
# Hint: hint.numpy_scalar
import numpy as np
input = np.empty((640, 480), dtype=np.uint8, order='F')
for y in range(480):
    for x in range(640):
        input[x, y] = x ^ (y + 1)
