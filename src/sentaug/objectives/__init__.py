"""Training objectives: small loss modules with one job each."""
from .infonce import InfoNCE, NTXent

__all__ = ["InfoNCE", "NTXent"]
