"""The descent lab's presets: the tutorial's stories (S12-S14, S16, S21, S22) as requests.

Each preset is a POST /api/descent body plus an id; its title and story are UI strings
(descent.preset.<id>.title / .story in static/i18n/*.json), so they exist in both languages.
"""

from __future__ import annotations

from typing import Any

PRESETS: list[dict[str, Any]] = [
    {"id": "blindfold", "section": "S22", "surface": "quadratic", "start": [-1.5, 1.8],
     "steps": 40, "runs": [{"optimizer": "sgd", "lr": 0.1, "label": "SGD lr=0.1"}]},
    {"id": "ravine", "section": "S12", "surface": "valley", "params": {"condition": 50},
     "start": [-2.5, 1.0], "steps": 150,
     "runs": [{"optimizer": "sgd", "lr": 0.038, "label": "SGD"},
              {"optimizer": "momentum", "lr": 0.05, "momentum": 0.5,
               "label": "SGD + momentum 0.5"}]},
    {"id": "rosenbrock", "section": "S12", "surface": "rosenbrock", "start": [-1.5, 2.0],
     "steps": 1000,
     "runs": [{"optimizer": "sgd", "lr": 0.001, "label": "SGD lr=0.001"},
              {"optimizer": "adam", "lr": 0.05, "label": "Adam lr=0.05"}]},
    {"id": "table", "section": "S12", "surface": "rosenbrock", "start": [-1.5, 2.0],
     "steps": 1000,
     "runs": [{"optimizer": "sgd", "lr": 0.001}, {"optimizer": "momentum", "lr": 0.0005},
              {"optimizer": "adam", "lr": 0.05}, {"optimizer": "adamw", "lr": 0.05},
              {"optimizer": "rmsprop", "lr": 0.01}]},
    {"id": "weight_decay", "section": "S12", "surface": "booth", "start": [-8.0, 8.0],
     "steps": 400,
     "runs": [{"optimizer": "adam", "lr": 0.1, "weight_decay": 0.5,
               "label": "Adam weight_decay=0.5"},
              {"optimizer": "adamw", "lr": 0.1, "weight_decay": 0.5,
               "label": "AdamW weight_decay=0.5"}]},
    {"id": "schedulers", "section": "S13", "surface": "rosenbrock", "start": [-1.5, 2.0],
     "steps": 600,
     "runs": [{"optimizer": "adam", "lr": 0.1, "label": "constant lr"},
              {"optimizer": "adam", "lr": 0.1, "scheduler": {"kind": "step", "step_size": 150,
                                                             "gamma": 0.3}, "label": "StepLR"},
              {"optimizer": "adam", "lr": 0.1, "scheduler": {"kind": "cosine", "T_max": 600},
               "label": "CosineAnnealingLR"},
              {"optimizer": "adam", "lr": 0.1, "scheduler": {"kind": "plateau", "patience": 10,
                                                             "factor": 0.5},
               "label": "ReduceLROnPlateau"}]},
    {"id": "groups", "section": "S14", "surface": "valley", "params": {"condition": 20},
     "start": [-2.5, 1.5], "steps": 200,
     "runs": [{"optimizer": "adamw", "lr": 0.01, "weight_decay": 0.01, "label": "one lr"},
              {"optimizer": "adamw", "lr": 0.1, "lr_y": 0.005, "weight_decay": 0.01,
               "label": "x: lr 0.1, y: lr 0.005"}]},
    {"id": "cliff", "section": "S16", "surface": "cliff", "start": [-1.1, 1.5], "steps": 150,
     "runs": [{"optimizer": "sgd", "lr": 0.1, "label": "no clipping"},
              {"optimizer": "sgd", "lr": 0.1, "clip": {"kind": "norm", "max": 1.0},
               "label": "clip_grad_norm_ 1.0"},
              {"optimizer": "sgd", "lr": 0.1, "clip": {"kind": "value", "max": 0.5},
               "label": "clip_grad_value_ 0.5"}]},
    {"id": "too_large", "section": "S21", "surface": "rosenbrock", "start": [-1.5, 2.0],
     "steps": 200,
     "runs": [{"optimizer": "sgd", "lr": 0.001, "label": "lr=0.001"},
              {"optimizer": "sgd", "lr": 0.004, "label": "lr=0.004 (too large)"}]},
]
