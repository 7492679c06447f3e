"""An example sentaug augmentation plugin: negation as a hard negative (docs/extending.md)."""
