"""Sentence augmentations: a registry of named operations (`registry`), a cached spaCy parse (`parse`)
and the parquet caches every training run reads its positives from (`cache`). Families: `sda`."""
