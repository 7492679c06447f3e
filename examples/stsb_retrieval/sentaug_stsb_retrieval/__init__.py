"""An evaluation suite plugin for sentaug: STS-B paraphrase retrieval (docs/extending.md)."""
