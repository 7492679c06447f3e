"""What the Snakefile asks of the running Snakemake process, beside the paths of `sentaug.workflow`, one job per
module: the local scheduler's job-rate limiter (`rate_limit`), GPUs shared by training runs and a model's
evaluations in one process (`gpu_groups`), the
environment and job server its jobs start in (`job_environment`), the first table announced (`announce`), the
answer to a target left under results/ when `--config results=` moved the outputs (`moved_target`), and the
digest of the code each rule runs (`code_digest`).
"""
from .announce import announce_first_table
from .code_digest import (augmentation_module, code_digest, code_files, module_closure, part_plugin_modules,
                          plugin_file, plugin_module)
from .gpu_groups import share_evaluation_processes, share_gpus
from .job_environment import export_job_environment, start_job_server, stop_job_server
from .moved_target import moved_target, moved_target_pattern
from .rate_limit import drop_local_job_rate_limit

__all__ = ["announce_first_table", "augmentation_module", "code_digest", "code_files", "module_closure",
           "part_plugin_modules", "plugin_file", "plugin_module", "share_evaluation_processes", "share_gpus",
           "export_job_environment", "start_job_server", "stop_job_server", "drop_local_job_rate_limit", "moved_target",
           "moved_target_pattern"]
