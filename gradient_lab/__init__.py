"""Gradient Lab: see how PyTorch computes gradients and how optimizers use them."""
