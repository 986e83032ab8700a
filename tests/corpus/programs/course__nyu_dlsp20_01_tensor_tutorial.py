# Source: https://github.com/Atcold/NYU-DLSP20/blob/master/01-tensor_tutorial.ipynb
# Author: Alfredo Canziani (NYU Deep Learning, Spring 2020); License: CC BY-NC-SA 4.0
# Edits:
#   - code cells joined in notebook order
#   - removed the Jupyter-only cells: tab-completion demo "torch.sq" (an AttributeError as a program), "?"/"??" help, !ls, %%bash, %magic
#   - removed the res.plot_lib / matplotlib import cell and the three plt.hist cells
#   - wrapped each cell's final bare expression in print(), except the first bare "t" after t = torch.Tensor(2, 3, 4) (uninitialised memory: differs on every run)
import torch  # <Ctrl> / <Shift> + <Return>

print(torch.nn.Module())  # <Shift>+<Tab>

# Generate a tensor of size 2x3x4
t = torch.Tensor(2, 3, 4)
print(type(t))

# Get the size of the tensor
print(t.size())

# t.size() is a classic tuple =>
print('t size:', ' \u00D7 '.join(map(str, t.size())))

# prints dimensional space and sub-dimensions
print(f'point in a {t.numel()} dimensional space')
print(f'organised in {t.dim()} sub-dimensions')

t

# Mind the underscore!
# Any operation that mutates a tensor in-place is post-fixed with an _.
# For example: x.copy_(y), x.t_(), x.random_(n) will change x.
print(t.random_(10))

print(t)

# This resizes the tensor permanently 
r = torch.Tensor(t)
r.resize_(3, 8)
print(r)

# As you can see zero_ would replace r with 0's which was originally filled with integers
print(r.zero_())

print(t)

# This *is* important, sigh...
s = r.clone()

# In-place fill of 1's
s.fill_(1)
print(s)

# Because we cloned r, even though we did an in-place operation, this doesn't affect r
print(r)

# Creates a 1D tensor of integers 1 to 4
v = torch.Tensor([1, 2, 3, 4])
print(v)

# Print number of dimensions (1D) and size of tensor
print(f'dim: {v.dim()}, size: {v.size()[0]}')

w = torch.Tensor([1, 0, 2, 0])
print(w)

# Element-wise multiplication
print(v * w)

# Scalar product: 1*1 + 2*0 + 3*2 + 4*0
print(v @ w)

# In-place replacement of random number from 0 to 10
x = torch.Tensor(5).random_(10)
print(x)

print(f'first: {x[0]}, last: {x[-1]}')

# Extract sub-Tensor [from:to)
print(x[1:2 + 1])

print(v)

# Create a tensor with integers ranging from 1 to 5, excluding 5
v = torch.arange(1, 4 + 1)
print(v)

# Square all elements in the tensor
print(v.pow(2), v)

# Create a 2x4 tensor
m = torch.Tensor([[2, 5, 3, 7],
                  [4, 2, 1, 9]])
print(m)

print(m.dim())

print(m.size(0), m.size(1), m.size(), sep=' -- ')

# Returns the total number of elements, hence num-el (number of elements)
print(m.numel())

# Indexing row 0, column 2 (0-indexed)
print(m[0][2])

# Indexing row 0, column 2 (0-indexed)
print(m[0, 2])

# Indexing column 1, all rows (returns size 2)
print(m[:, 1])

# Indexing column 1, all rows (returns size 2x1)
print(m[:, [1]])

# Indexes row 0, all columns (returns 1x4)
print(m[[0], :])

# Indexes row 0, all columns (returns size 4)
print(m[0, :])

# Create tensor of numbers from 1 to 5 (excluding 5)
v = torch.arange(1., 4 + 1)
print(v)

print(m)

# Scalar product
print(m @ v)

# Calculated by 1*2 + 2*5 + 3*3 + 4*7
print(m[[0], :] @ v)

# Calculated by 
print(m[[1], :] @ v)

# Add a random tensor of size 2x4 to m
print(m + torch.rand(2, 4))

# Subtract a random tensor of size 2x4 to m
print(m - torch.rand(2, 4))

# Multiply a random tensor of size 2x4 to m
print(m * torch.rand(2, 4))

# Divide m by a random tensor of size 2x4
print(m / torch.rand(2, 4))

print(m.size())

# Transpose tensor m, which is essentially 2x4 to 4x2
print(m.t())

# Same as
print(m.transpose(0, 1))

# Create tensor from 3 to 8, with each having a space of 1
print(torch.arange(3., 8 + 1))

# Create tensor from 5.7 to -2.1 with each having a space of -3
print(torch.arange(5.7, -2.1, -3))

# returns a 1D tensor of steps equally spaced points between start=3, end=8 and steps=20
print(torch.linspace(3, 8, 20).view(1, -1))

# Create a tensor filled with 0's
print(torch.zeros(3, 5))

# Create a tensor filled with 1's
print(torch.ones(3, 2, 5))

# Create a tensor with the diagonal filled with 1
print(torch.eye(3))

# Checking for available device (CPU, GPU, MPS)
device = "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"
print("Device: ", device)

# Create a tensor on the CPU (default)
z = torch.ones(2, 3, 5)

# Move tensor to the device
z_1 = z.to(device) # Remember: when moving tensors to a device, you have to reassign them!
print(f"Tensor on {device}:\n", z_1)

# Multiple GPUs? You can specify which one to use:
# e.g., move your tensor to GPU device 0 (first GPU in the system) if there is one
device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
z_2 = z.to(device)
print(f"Tensor on {device}:\n", z_2)

# Not sure which of your GPUs is the first one for PyTorch?
gpus = []

# List the available GPUs in order
if torch.cuda.is_available():
    gpus = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]

print(gpus)

print(m)

# This is basically a 64 bit float tensor
m_double = m.double()
print(m_double)

# This creates a tensor of type int8
m_byte = m.byte()
print(m_byte)

# Move your tensor to GPU device 0 if there is one (first GPU in the system)
device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
print(m.to(device))

# Converts tensor to numpy array
m_np = m.numpy()
print(m_np)

# In-place fill of column 0 and row 0 with value -1
m_np[0, 0] = -1
print(m_np)

print(m)

# Create a tensor of integers ranging from 0 to 4
import numpy as np
n_np = np.arange(5)
n = torch.from_numpy(n_np)
print(n_np, n)

# In-place multiplication of all elements by 2 for tensor n
# Because n is essentially n_np, not a clone, this affects n_np
n.mul_(2)
print(n_np)

# Creates two tensors of size 1x4
a = torch.Tensor([[1, 2, 3, 4]])
b = torch.Tensor([[5, 6, 7, 8]])
print(a.size(), b)

# Concatenate on axis 0, so you get 2x4
print(torch.cat((a, b), 0))

# Concatenate on axis 1, so you get 1x8
print(torch.cat((a, b), 1))
