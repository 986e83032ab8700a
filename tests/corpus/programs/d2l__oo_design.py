# Source: https://github.com/d2l-ai/d2l-en/blob/master/chapter_linear-regression/oo-design.md
# Author: Aston Zhang, Zachary C. Lipton, Mu Li, Alexander J. Smola (d2l-ai/d2l-en); License: sample code MIT-0 (LICENSE-SAMPLECODE), text CC BY-SA 4.0
# Edits:
#   - joined the first six PyTorch code cells of the page in order (the later cells plot with ProgressBoard or only define classes)
#   - replaced 'from d2l import torch as d2l' with a class d2l holding a copy of HyperParameters from d2l/torch.py (plus 'import inspect', which it needs)
import time
import numpy as np
import inspect
import torch
from torch import nn
# --- copied from d2l/torch.py ---
class d2l:
    class HyperParameters:
        """The base class of hyperparameters."""
        def save_hyperparameters(self, ignore=[]):
            """Defined in :numref:`sec_oo-design`"""
            raise NotImplemented

        def save_hyperparameters(self, ignore=[]):
            """Save function arguments into class attributes.
        
            Defined in :numref:`sec_utils`"""
            frame = inspect.currentframe().f_back
            _, _, _, local_vars = inspect.getargvalues(frame)
            self.hparams = {k:v for k, v in local_vars.items()
                            if k not in set(ignore+['self']) and not k.startswith('_')}
            for k, v in self.hparams.items():
                setattr(self, k, v)
# --- end of copy ---

def add_to_class(Class):  #@save
    """Register functions as methods in created class."""
    def wrapper(obj):
        setattr(Class, obj.__name__, obj)
    return wrapper

class A:
    def __init__(self):
        self.b = 1

a = A()

@add_to_class(A)
def do(self):
    print('Class attribute "b" is', self.b)

a.do()

class HyperParameters:  #@save
    """The base class of hyperparameters."""
    def save_hyperparameters(self, ignore=[]):
        raise NotImplemented

# Call the fully implemented HyperParameters class saved in d2l
class B(d2l.HyperParameters):
    def __init__(self, a, b, c):
        self.save_hyperparameters(ignore=['c'])
        print('self.a =', self.a, 'self.b =', self.b)
        print('There is no self.c =', not hasattr(self, 'c'))

b = B(a=1, b=2, c=3)
