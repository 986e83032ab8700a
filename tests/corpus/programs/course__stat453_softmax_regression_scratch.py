# Source: https://github.com/rasbt/stat453-deep-learning-ss21/blob/main/L08/code/softmax-regression_scratch.ipynb
# Author: Sebastian Raschka (STAT 453, Spring 2021); License: MIT
# Edits:
#   - code cells joined in notebook order
#   - removed the %load_ext watermark / %watermark IPython magic cell
#   - removed %matplotlib inline, the matplotlib and pandas imports and the plotting cells / lines (scatter plots, cost curve, plot_decision_regions)
#   - replaced pandas reading ./data/iris.data (columns x2/x4, label mapping) by the same 150 rows written in-program as tensor literals (pandas is not available)
import torch
import torch.nn.functional as F

##########################
### DATASET
##########################



# Assign features and target
# (in-program copy of the 150 rows of iris.data: columns x2, x4; y mapped with
#  {'Iris-versicolor': 1, 'Iris-virginica': 2, 'Iris-setosa': 0})

X = torch.tensor([
    [3.5, 0.2], [3.0, 0.2], [3.2, 0.2], [3.1, 0.2], [3.6, 0.2], [3.9, 0.4],
    [3.4, 0.3], [3.4, 0.2], [2.9, 0.2], [3.1, 0.1], [3.7, 0.2], [3.4, 0.2],
    [3.0, 0.1], [3.0, 0.1], [4.0, 0.2], [4.4, 0.4], [3.9, 0.4], [3.5, 0.3],
    [3.8, 0.3], [3.8, 0.3], [3.4, 0.2], [3.7, 0.4], [3.6, 0.2], [3.3, 0.5],
    [3.4, 0.2], [3.0, 0.2], [3.4, 0.4], [3.5, 0.2], [3.4, 0.2], [3.2, 0.2],
    [3.1, 0.2], [3.4, 0.4], [4.1, 0.1], [4.2, 0.2], [3.1, 0.1], [3.2, 0.2],
    [3.5, 0.2], [3.1, 0.1], [3.0, 0.2], [3.4, 0.2], [3.5, 0.3], [2.3, 0.3],
    [3.2, 0.2], [3.5, 0.6], [3.8, 0.4], [3.0, 0.3], [3.8, 0.2], [3.2, 0.2],
    [3.7, 0.2], [3.3, 0.2], [3.2, 1.4], [3.2, 1.5], [3.1, 1.5], [2.3, 1.3],
    [2.8, 1.5], [2.8, 1.3], [3.3, 1.6], [2.4, 1.0], [2.9, 1.3], [2.7, 1.4],
    [2.0, 1.0], [3.0, 1.5], [2.2, 1.0], [2.9, 1.4], [2.9, 1.3], [3.1, 1.4],
    [3.0, 1.5], [2.7, 1.0], [2.2, 1.5], [2.5, 1.1], [3.2, 1.8], [2.8, 1.3],
    [2.5, 1.5], [2.8, 1.2], [2.9, 1.3], [3.0, 1.4], [2.8, 1.4], [3.0, 1.7],
    [2.9, 1.5], [2.6, 1.0], [2.4, 1.1], [2.4, 1.0], [2.7, 1.2], [2.7, 1.6],
    [3.0, 1.5], [3.4, 1.6], [3.1, 1.5], [2.3, 1.3], [3.0, 1.3], [2.5, 1.3],
    [2.6, 1.2], [3.0, 1.4], [2.6, 1.2], [2.3, 1.0], [2.7, 1.3], [3.0, 1.2],
    [2.9, 1.3], [2.9, 1.3], [2.5, 1.1], [2.8, 1.3], [3.3, 2.5], [2.7, 1.9],
    [3.0, 2.1], [2.9, 1.8], [3.0, 2.2], [3.0, 2.1], [2.5, 1.7], [2.9, 1.8],
    [2.5, 1.8], [3.6, 2.5], [3.2, 2.0], [2.7, 1.9], [3.0, 2.1], [2.5, 2.0],
    [2.8, 2.4], [3.2, 2.3], [3.0, 1.8], [3.8, 2.2], [2.6, 2.3], [2.2, 1.5],
    [3.2, 2.3], [2.8, 2.0], [2.8, 2.0], [2.7, 1.8], [3.3, 2.1], [3.2, 1.8],
    [2.8, 1.8], [3.0, 1.8], [2.8, 2.1], [3.0, 1.6], [2.8, 1.9], [3.8, 2.0],
    [2.8, 2.2], [2.8, 1.5], [2.6, 1.4], [3.0, 2.3], [3.4, 2.4], [3.1, 1.8],
    [3.0, 1.8], [3.1, 2.1], [3.1, 2.4], [3.1, 2.3], [2.7, 1.9], [3.2, 2.3],
    [3.3, 2.5], [3.0, 2.3], [2.5, 1.9], [3.0, 2.0], [3.4, 2.3], [3.0, 1.8],
], dtype=torch.float)
y = torch.tensor([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2], dtype=torch.int)

# Shuffling & train/test split

torch.manual_seed(123)
shuffle_idx = torch.randperm(y.size(0), dtype=torch.long)

X, y = X[shuffle_idx], y[shuffle_idx]

percent80 = int(shuffle_idx.size(0)*0.8)

X_train, X_test = X[shuffle_idx[:percent80]], X[shuffle_idx[percent80:]]
y_train, y_test = y[shuffle_idx[:percent80]], y[shuffle_idx[percent80:]]

# Normalize (mean zero, unit variance)

mu, sigma = X_train.mean(dim=0), X_train.std(dim=0)
X_train = (X_train - mu) / sigma
X_test = (X_test - mu) / sigma

DEVICE = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")

def to_onehot(y, num_classes):
    y_onehot = torch.FloatTensor(y.size(0), num_classes)
    y_onehot.zero_()
    y_cpu = y.to(torch.device('cpu'))
    y_onehot.scatter_(1, y_cpu.view(-1, 1).long(), 1).float()
    return y_onehot.to(DEVICE)

def softmax(z):
    return (torch.exp(z.t()) / torch.sum(torch.exp(z), dim=1)).t()
                    
def cross_entropy(softmax, y_target):
    return -torch.sum(torch.log(softmax) * (y_target), dim=1)

class SoftmaxRegression1():
    def __init__(self, num_features, num_classes):
        self.num_features = num_features
        self.num_classes = num_classes
        self.weights = torch.zeros(num_classes, num_features, # h x m
                                   dtype=torch.float32, device=DEVICE)
        self.bias = torch.zeros(num_classes, dtype=torch.float32, device=DEVICE) # h

    def forward(self, x):
        logits = torch.mm(x, self.weights.t()) + self.bias # net inputs
        probas = softmax(logits) # activations
        return logits, probas
        
    def backward(self, x, y, probas):  
        grad_loss_wrt_w = -torch.mm(x.t(), y - probas).t()
        grad_loss_wrt_b = -torch.sum(y - probas)
        return grad_loss_wrt_w, grad_loss_wrt_b
            
    def predict_labels(self, x):
        logits, probas = self.forward(x)
        labels = torch.argmax(probas, dim=1)
        return labels    
            
    def evaluate(self, x, y):
        labels = self.predict_labels(x).float()
        accuracy = torch.sum(labels.view(-1) == y.float()).item() / y.size(0)
        return accuracy
    
    def train(self, x, y, num_epochs, learning_rate=0.01):
        epoch_cost = []
        for e in range(num_epochs):
            
            y_onehot = to_onehot(y, num_classes=self.num_classes)
            
            #### Compute outputs ####
            logits, probas = self.forward(x)
            
            #### Compute gradients ####
            grad_w, grad_b = self.backward(x, y_onehot, probas)

            #### Update weights ####
            self.weights -= learning_rate * grad_w / y.size(0)
            self.bias -= learning_rate * grad_b / y.size(0)
            
            #### Logging ####
            logits, probas = self.forward(x)
            cost = torch.mean(cross_entropy(probas, y_onehot))
            print('Epoch: %03d' % (e+1), end="")
            print(' | Train ACC: %.3f' % self.evaluate(x, y), end="")
            print(' | Cost: %.3f' % cost)
            epoch_cost.append(cost)
        return epoch_cost

X_train = X_train.to(DEVICE)
y_train = y_train.to(DEVICE)

model1 = SoftmaxRegression1(num_features=2, num_classes=3)
epoch_cost = model1.train(X_train, y_train, 
                          num_epochs=50,
                          learning_rate=0.1)

print('\nModel parameters:')
print('  Weights: %s' % model1.weights)
print('  Bias: %s' % model1.bias)

X_test = X_test.to(DEVICE)
y_test = y_test.to(DEVICE)

test_acc = model1.evaluate(X_test, y_test)
print('Test set accuracy: %.2f%%' % (test_acc*100))

class SoftmaxRegression2(torch.nn.Module):

    def __init__(self, num_features, num_classes):
        super(SoftmaxRegression2, self).__init__()
        self.linear = torch.nn.Linear(num_features, num_classes)
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
        probas = F.softmax(logits, dim=1)
        return logits, probas

model2 = SoftmaxRegression2(num_features=2, num_classes=3).to(DEVICE)
optimizer = torch.optim.SGD(model2.parameters(), lr=0.1)

def comp_accuracy(true_labels, pred_labels):
    accuracy = torch.sum(true_labels.view(-1).float() == 
                         pred_labels.float()).item() / true_labels.size(0)
    return accuracy



X_train = X_train.to(DEVICE)
y_train = y_train.to(DEVICE)
X_test = X_test.to(DEVICE)
y_test = y_test.to(DEVICE)

num_epochs = 50
for epoch in range(num_epochs):
    
    #### Compute outputs ####
    logits, probas = model2(X_train)
    
    #### Compute gradients ####
    cost = F.cross_entropy(logits, y_train.long())
    optimizer.zero_grad()
    cost.backward()
    
    #### Update weights ####  
    optimizer.step()
    
    #### Logging ####      
    logits, probas = model2(X_train)
    acc = comp_accuracy(y_train, torch.argmax(probas, dim=1))
    print('Epoch: %03d' % (epoch + 1), end="")
    print(' | Train ACC: %.3f' % acc, end="")
    print(' | Cost: %.3f' % F.cross_entropy(logits, y_train.long()))


    
print('\nModel parameters:')
print('  Weights: %s' % model2.linear.weight)
print('  Bias: %s' % model2.linear.bias)

X_test = X_test.to(DEVICE)
y_test = y_test.to(DEVICE)

test_acc = model1.evaluate(X_test, y_test)
print('Test set accuracy: %.2f%%' % (test_acc*100))
