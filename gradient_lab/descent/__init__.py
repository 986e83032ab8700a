"""The descent lab: loss surfaces (built-in and typed), torch.optim's optimizers racing down
them, lr sweeps and basins maps, and the stories (presets) that set up a race."""
