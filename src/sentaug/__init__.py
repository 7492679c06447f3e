"""sentaug: contrastive sentence embeddings with data augmentation, reproduced as one workflow."""

__version__ = "0.1.0"
