"""An example sentaug method-part plugin: alignment and uniformity as a training objective (docs/extending.md)."""
