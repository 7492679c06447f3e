"""Training objectives: small loss modules with one job each."""
from .infonce import InfoNCE

__all__ = ["InfoNCE"]
