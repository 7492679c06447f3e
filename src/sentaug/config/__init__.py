"""Configuration: scales, backbones, methods, papers.

`config.yaml` is the single source of settings. The Snakefile validates it (`validation`) and then asks this
package to resolve what one job needs: a training spec (`spec`), the stand-in backbone and an augmentation's call
at the chosen scale (`scales`), a method variant (`variants`), the paper tables to expand (`papers`), the hub
models a scale loads without a pinned commit (`pins`). Rules pass the resolved values to the command line as
parameters, so Snakemake reruns exactly the jobs whose settings changed. Every name is importable from
`sentaug.config` itself.
"""
from .papers import ADDED_MARK, ADDED_NOTE, STS_COLUMNS, add_table_rows, added_rows, iter_rows, load_paper
from .pins import hub_models, unpinned, unpinned_lines, warn_unpinned
from .scales import (augmentation_backbone, augmentation_call, augmentation_language, augmentation_set,
                     backbone_language, mirror_dir, model_mirror_dir, papers_scale, scale_settings, stand_in)
from .spec import METHOD_KEYS, method_caches, method_index, spec_digest, train_spec
from .validation import (SCHEMA_PATH, ConfigError, augment_modules, check_augmentation_ops, check_references,
                         load_plugins, load_yaml, part_modules, scale_names, validate)
from .variants import VARIANT_SEP, get_setting, is_method, method_config, split_variant, variant_name

__all__ = ["ADDED_MARK", "ADDED_NOTE", "STS_COLUMNS", "add_table_rows", "added_rows", "iter_rows", "load_paper",
           "augmentation_backbone", "augmentation_call", "augmentation_language", "augmentation_set",
           "backbone_language", "mirror_dir", "model_mirror_dir", "papers_scale", "scale_settings", "stand_in",
           "METHOD_KEYS",
           "method_caches", "method_index", "spec_digest", "train_spec", "SCHEMA_PATH", "ConfigError",
           "augment_modules", "check_augmentation_ops", "check_references", "load_plugins", "load_yaml",
           "part_modules", "scale_names", "validate", "VARIANT_SEP", "get_setting", "is_method", "method_config", "split_variant",
           "variant_name", "hub_models", "unpinned", "unpinned_lines", "warn_unpinned"]
