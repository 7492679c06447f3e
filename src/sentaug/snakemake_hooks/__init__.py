"""What the Snakefile asks of the running Snakemake process, beside the paths of `sentaug.workflow`, one job per
module: the local scheduler's job-rate limiter (`rate_limit`), GPUs shared by training runs and a model's
evaluations in one process (`gpu_groups`), the
environment and job server its jobs start in (`job_environment`), the first table announced (`announce`), the
answer to a target left under results/ when `--config results=` moved the outputs, or asked for without its
paper's folder (`moved_target`), a report of whatever is built (`reporting`), the hint that tells a live
run's lock from a stale one (`lock_hint`), and the digest of the code each rule runs (`code_digest`).
"""
from .announce import announce_first_table
from .code_digest import (augmentation_module, code_digest, code_files, module_closure, part_plugin_modules,
                          plugin_file, plugin_module)
from .gpu_groups import share_evaluation_processes, share_gpus
from .job_environment import export_job_environment, start_job_server, stop_job_server
from .lock_hint import explain_locks
from .moved_target import misplaced_target, misplaced_target_pattern, moved_target, moved_target_pattern
from .rate_limit import drop_local_job_rate_limit
from .reporting import build_flags, reporting

__all__ = ["announce_first_table", "augmentation_module", "code_digest", "code_files", "module_closure",
           "part_plugin_modules", "plugin_file", "plugin_module", "share_evaluation_processes", "share_gpus",
           "export_job_environment", "start_job_server", "stop_job_server", "drop_local_job_rate_limit", "moved_target",
           "moved_target_pattern", "misplaced_target", "misplaced_target_pattern", "reporting", "build_flags",
           "explain_locks"]
