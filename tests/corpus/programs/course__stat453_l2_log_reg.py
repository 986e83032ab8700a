# Source: https://github.com/rasbt/stat453-deep-learning-ss21/blob/main/L10/code/L2-log-reg.ipynb
# Author: Sebastian Raschka (STAT 453, Spring 2021); License: MIT
# Edits:
#   - code cells joined in notebook order
#   - removed the %load_ext watermark / %watermark IPython magic cell
#   - removed %matplotlib inline, the matplotlib import and the data scatter plot
#   - replaced np.genfromtxt('data/toydata.txt', ...) by np.genfromtxt(io.StringIO(TOYDATA), ...) on an in-program copy of the repository's 100-row toydata.txt
import numpy as np

import torch
import torch.nn.functional as F

device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')
LAMBDA = 2

import io

# in-program copy of data/toydata.txt (100 rows: two features and a 0/1 label, tab-separated)
TOYDATA = """\
0.77\t-1.14\t0
-0.33\t1.44\t0
0.91\t-3.07\t0
-0.37\t-1.91\t0
-1.84\t-1.13\t0
-1.50\t0.34\t0
-0.63\t-1.53\t0
-1.08\t-1.23\t0
0.39\t-1.99\t0
-1.26\t-2.90\t0
-5.27\t-0.78\t0
-0.49\t-2.74\t0
1.48\t-3.74\t0
-1.64\t-1.96\t0
0.45\t0.36\t0
-1.48\t-1.17\t0
-2.94\t-4.47\t0
-2.19\t-1.48\t0
0.02\t-0.02\t0
-2.24\t-2.12\t0
-3.17\t-3.69\t0
-4.09\t1.03\t0
-2.41\t-2.31\t0
-3.45\t-0.61\t0
-3.96\t-2.00\t0
-2.95\t-1.16\t0
-2.42\t-3.35\t0
-1.74\t-1.10\t0
-1.61\t-1.28\t0
-2.59\t-2.21\t0
-2.64\t-2.20\t0
-2.84\t-4.12\t0
-1.45\t-2.26\t0
-3.98\t-1.05\t0
-2.97\t-1.63\t0
-0.68\t-1.52\t0
-0.10\t-3.43\t0
-1.14\t-2.66\t0
-2.92\t-2.51\t0
-2.14\t-1.62\t0
-3.33\t-0.44\t0
-1.05\t-3.85\t0
0.38\t0.95\t0
-0.05\t-1.95\t0
-3.20\t-0.22\t0
-2.26\t0.01\t0
-1.41\t-0.33\t0
-1.20\t-0.71\t0
-1.69\t0.80\t0
-1.52\t-1.14\t0
3.88\t0.65\t1
0.73\t2.97\t1
0.83\t3.94\t1
1.59\t1.25\t1
3.92\t3.48\t1
3.87\t2.91\t1
1.14\t3.91\t1
1.73\t2.80\t1
2.95\t1.84\t1
2.61\t2.92\t1
2.38\t0.90\t1
2.30\t3.33\t1
1.31\t1.85\t1
1.56\t3.85\t1
2.67\t2.41\t1
1.23\t2.54\t1
1.33\t2.03\t1
1.36\t2.68\t1
2.58\t1.79\t1
2.40\t0.91\t1
0.51\t2.44\t1
2.17\t2.64\t1
4.38\t2.94\t1
1.09\t3.12\t1
0.68\t1.54\t1
1.93\t3.71\t1
1.26\t1.17\t1
1.90\t1.34\t1
3.13\t0.92\t1
0.85\t1.56\t1
1.50\t3.93\t1
2.95\t2.09\t1
0.77\t2.84\t1
1.00\t0.46\t1
3.19\t2.32\t1
2.92\t2.32\t1
2.86\t1.35\t1
0.97\t2.68\t1
1.20\t1.31\t1
1.54\t2.02\t1
1.65\t0.63\t1
1.36\t-0.22\t1
2.63\t0.40\t1
0.90\t2.05\t1
1.26\t3.54\t1
0.71\t2.27\t1
1.96\t0.83\t1
2.52\t1.83\t1
2.77\t2.82\t1
4.16\t3.34\t1
"""

##########################
### DATASET
##########################

data = np.genfromtxt(io.StringIO(TOYDATA), delimiter='\t')
x = data[:, :2].astype(np.float32)
y = data[:, 2].astype(np.int64)

np.random.seed(123)
idx = np.arange(y.shape[0])
np.random.shuffle(idx)
X_test, y_test = x[idx[:25]], y[idx[:25]]
X_train, y_train = x[idx[25:]], y[idx[25:]]
mu, std = np.mean(X_train, axis=0), np.std(X_train, axis=0)
X_train, X_test = (X_train - mu) / std, (X_test - mu) / std

def custom_where(cond, x_1, x_2):
    return (cond * x_1) + ((1-cond) * x_2)


class LogisticRegression(torch.nn.Module):

    def __init__(self, num_features):
        super(LogisticRegression, self).__init__()
        self.linear = torch.nn.Linear(num_features, 1)
        # initialize weights to zeros here,
        # since we used zero weights in the
        # manual approach
        
        self.linear.weight.detach().zero_()
        self.linear.bias.detach().zero_()
        # Note: the trailing underscore
        # means "in-place operation" in the context
        # of PyTorch
        
    def forward(self, x):
        logits = self.linear(x)
        probas = torch.sigmoid(logits)
        return probas

model = LogisticRegression(num_features=2).to(device)

#########################################################
## Apply L2 regularization
optimizer = torch.optim.SGD(model.parameters(), 
                            lr=0.1, 
                            weight_decay=LAMBDA)
#-------------------------------------------------------


def comp_accuracy(label_var, pred_probas):
    pred_labels = custom_where((pred_probas > 0.5).float(), 1, 0).view(-1)
    acc = torch.sum(pred_labels == label_var.view(-1)).float() / label_var.size(0)
    return acc


num_epochs = 30

X_train_tensor = torch.tensor(X_train, dtype=torch.float32, device=device)
y_train_tensor = torch.tensor(y_train, dtype=torch.float32, device=device).view(-1, 1)


for epoch in range(num_epochs):
    
    #### Compute outputs ####
    out = model(X_train_tensor)
    
    #### Compute gradients ####
    cost = F.binary_cross_entropy(out, y_train_tensor, reduction='sum')
    optimizer.zero_grad()
    cost.backward()
    
    #### Update weights ####  
    optimizer.step()
    
    #### Logging ####      
    pred_probas = model(X_train_tensor)
    acc = comp_accuracy(y_train_tensor, pred_probas)
    print('Epoch: %03d' % (epoch + 1), end="")
    print(' | Train ACC: %.3f' % acc, end="")
    print(' | Cost: %.3f' % F.binary_cross_entropy(pred_probas, y_train_tensor))


    
print('\nModel parameters:')
print('  Weights: %s' % model.linear.weight)
print('  Bias: %s' % model.linear.bias)


X_test_tensor = torch.tensor(X_test, dtype=torch.float32, device=device)
y_test_tensor = torch.tensor(y_test, dtype=torch.float32, device=device)

pred_probas = model(X_test_tensor)
test_acc = comp_accuracy(y_test_tensor, pred_probas)

print('\n\nTest set accuracy: %.2f%%' % (test_acc*100))
