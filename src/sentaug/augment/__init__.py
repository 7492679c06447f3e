"""Sentence augmentations: a registry of named operations (`registry`), a cached spaCy parse (`parse`)
and the parquet caches every training run reads its positives from (`cache`). Families: `sda`, `cards`,
`clear`, `baselines` (SDA Tables 6/7), `explicit` (VaSCL's nlpaug ones)."""
