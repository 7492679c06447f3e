"""Training runs sharing GPUs (`share_gpus`) and a model's evaluations sharing one process
(`share_evaluation_processes`): what Snakemake is asked in each place a job passes through."""
from __future__ import annotations

import os

from ..workflow.jobs import RULES


def share_gpus(workflow, runs_per_gpu: int, rule: str = "train"):
    """Let `runs_per_gpu` jobs of `rule` share one GPU (config `scales.<scale>.runs_per_gpu`); returns the value
    of the rule's `group:` directive. Snakemake has no setting for it, so this arranges it in each of the
    three places a job passes through (docs/cost-and-gpus.md):

    * On a cluster (the main process): the rule's jobs form a group, `runs_per_gpu` of them per group
      (`--group-components <rule>=k`, unless given on the command line or in the profile): each group is one
      SLURM job. A group adds its jobs' numeric resources up; the GPU is the string resource `gres` instead
      (sentaug.workflow.resources.JobResources.train_job_resources), so the SLURM job asks for one GPU, not k.
    * Inside that SLURM job (remote execution): the SLURM plugin starts Snakemake there with `--jobs 1` and its
      jobstep executor waits for each job's `srun` before it starts the next, and an `srun` step holds the
      job's GPU for itself (snakemake-executor-plugin-slurm#469): the k runs would run one after another.
      There the rule is made local (its jobs run in the SLURM job itself, all at once, on its GPU) and up
      to k jobs may run at a time.
    * Locally: at most k x the visible GPUs training jobs at once (resource `gpu_runs`, unless given with
      --resources), each pinned to one GPU with a free slot (sentaug.train.gpu_share, told k through the
      environment the jobs inherit).

    The group's components are set when Snakemake first asks for a job's group: the command line's group
    settings replace the workflow's after the Snakefile is read."""
    from ..train.gpu_share import ENV_RUNS_PER_GPU, visible_gpus

    if runs_per_gpu <= 1:
        return None
    os.environ[ENV_RUNS_PER_GPU] = str(runs_per_gpu)     # the jobs inherit it
    if workflow.remote_exec:
        workflow.localrules(rule)
        workflow.register_resource("_nodes", runs_per_gpu)
        return None
    if workflow.resource_settings.nodes is None:        # local execution (a cluster run sets --jobs: nodes)
        gpus = visible_gpus()
        if gpus and "gpu_runs" not in workflow.global_resources:
            workflow.register_resource("gpu_runs", runs_per_gpu * len(gpus))

    def group(wildcards) -> str:
        settings = workflow.group_settings
        if rule not in settings.group_components:
            settings.group_components = {**settings.group_components, rule: runs_per_gpu}
        return rule

    return group


# The rules whose jobs run `sentaug evaluate <suite> --model ...`: those whose model sentaug.workflow.jobs names.
EVALUATION_RULES = tuple(rule for rule, kind in RULES.items() if kind.model is not None)
# Jobs of a group that may run at once inside one SLURM job (the cores the group asked for bound them too).
GROUP_JOBS_AT_ONCE = 64


def share_evaluation_processes(workflow, on_gpus: bool) -> bool:
    """At a scale on GPUs the evaluations of one model run in one process (sentaug.evaluate.service), which
    loads the model once: its jobs are told so through the environment they inherit (locally, and in a SLURM
    job, where Snakemake reads the Snakefile again). Inside a SLURM job of a group of evaluations
    (profiles/slurm) the jobstep executor would run the group's jobs one after another, each in an `srun` step
    holding the GPU (as for training, `share_gpus`): there the evaluation rules are made local, so that the
    group's jobs run at once in the SLURM job, on its GPU, and those of one model share its process. Returns
    whether the jobs share processes."""
    from ..evaluate.service import ENV

    if not on_gpus:
        return False
    os.environ[ENV] = "1"
    if workflow.remote_exec:
        workflow.localrules(*EVALUATION_RULES)
        # inside a SLURM job `_nodes` comes from `--jobs` as a snakemake Resource, or as the int share_gpus set
        nodes = workflow.global_resources.get("_nodes")
        nodes = getattr(nodes, "value", nodes) or 0
        workflow.register_resource("_nodes", max(GROUP_JOBS_AT_ONCE, nodes))
    return True
