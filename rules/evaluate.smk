# Stage 4: evaluation. A model's result on a suite (the registry sentaug.evaluate.suites, and config key
# suites.modules' plugins: STS by SimCSE's SentEval protocol,
# STS12-16 "all", STS-B and SICK-R test, unsupervised; transfer, clustering, GLUE, ...) is named by its file
# (sentaug.workflow.evaluations): one rule for a trained run's results and one for a pre-trained backbone's.
# Every result of one model is a job of one of these two, the model in its wildcards (a run's paper, backbone,
# method and seed; a backbone's origin and backbone) and the result in {evaluation}. At a scale on GPUs the jobs
# of one model (these and the augmentation analyses) run their commands in one process, which loads the model
# once (sentaug.evaluate.service; common.smk: share_evaluation_processes); on SLURM the profile's groups of
# evaluation jobs run at once inside their SLURM job.


rule evaluate_run:
    """A trained run on a suite: under its eval pooler (<suite>.json), under another pooler (<suite>.<pooler>.json,
    CLEAR Table 2's -mean rows) or with every STS sentence lower-cased (sts_lowercase.json, CARDS Table 4)."""
    input:
        model=lambda w: run_dir(w.paper, w.backbone, w.method, w.seed),
        data=lambda w: W.evaluations.suite_data(_run_evaluation(w).suite),
    output:
        W.paths.pattern("run_eval"),
    params:
        code=lambda w: code(W.evaluations.suite_code(_run_evaluation(w).suite)),
        suite=lambda w: _run_evaluation(w).suite,
        pooler=lambda w: _run_evaluation(w).pooler or run_spec(w)["eval_pooler"],
        data=data_root(),
        extra=lambda w: W.evaluations.evaluation_args(_run_evaluation(w)),
        scale=SCALE,
    wildcard_constraints:
        evaluation=run_evaluation_pattern(),
    threads: EVAL_THREADS
    resources:
        **job_resources("evaluate_run"),
    message:
        "evaluate {wildcards.evaluation}: {wildcards.method} on {wildcards.backbone}, seed {wildcards.seed}"
    log:
        W.paths.log("run_eval"),
    conda:
        "../envs/train.yaml"
    shell:
        "OMP_NUM_THREADS={threads} python -m sentaug.cli evaluate {params.suite} --model {input.model} "
        "--pooler {params.pooler} --data {params.data} --scale {params.scale} {params.extra} --out {output} "
        "> {log} 2>&1"


rule evaluate_pretrained:
    """A pre-trained backbone on a suite under a given pooler: STS (<pooler>.json), another suite
    (<suite>/<pooler>.json, e.g. the MiniLM reference numbers) or GLUE with R-drop / switch-case settings
    (glue~<settings>/<pooler>.json, CARDS Table 6)."""
    input:
        model=lambda w: backbone_dir(w.backbone),
        data=lambda w: W.evaluations.suite_data(_pretrained_evaluation(w).suite, w.origin),
    output:
        W.paths.pattern("pretrained_eval"),
    params:
        code=lambda w: code(W.evaluations.suite_code(_pretrained_evaluation(w).suite)),
        suite=lambda w: _pretrained_evaluation(w).suite,
        pooler=lambda w: _pretrained_evaluation(w).pooler,
        data=lambda w: data_root(w.origin),
        extra=lambda w: W.evaluations.evaluation_args(_pretrained_evaluation(w)),
        scale=SCALE,
    wildcard_constraints:
        evaluation=pretrained_evaluation_pattern(),
    threads: EVAL_THREADS
    resources:
        **job_resources("evaluate_pretrained"),
    message:
        "evaluate {wildcards.evaluation}: pre-trained {wildcards.backbone}"
    log:
        W.paths.log("pretrained_eval"),
    conda:
        "../envs/train.yaml"
    shell:
        "OMP_NUM_THREADS={threads} python -m sentaug.cli evaluate {params.suite} --model {input.model} "
        "--pooler {params.pooler} --data {params.data} --scale {params.scale} {params.extra} --out {output} "
        "> {log} 2>&1"


rule token_pca:
    """CARDS Figure 1: the 2-D PCA of a backbone's token embeddings, each token with its case / sub-token category
    and its frequency in the scale's corpus."""
    input:
        model=lambda w: backbone_dir(w.backbone),
        corpus=lambda w: corpus_file(w.corpus),
    output:
        W.paths.pattern("token_pca"),
    params:
        code=code("evaluate/token_embeddings.py"),
    log:
        W.paths.log("token_pca"),
    conda:
        "../envs/train.yaml"
    shell:
        "OMP_NUM_THREADS={threads} python -m sentaug.cli token-pca --model {input.model} --corpus {input.corpus} --out {output} 2> {log}"


# Analyses behind figures (sentaug.workflow resolves their paths and inputs; their settings,
# AUGMENTATION_ANALYSIS and HUB_OFFLINE, are in common.smk).
rule augmentation_analysis_pretrained:
    """Cosine, COND-HM, SVG and GPT-2 perplexity difference between each sentence and its augmentation, for
    every augmentation of a set (config augmentation_sets), under a pre-trained backbone and pooler."""
    input:
        model=lambda w: backbone_dir(w.backbone),
        caches=lambda w: W.paths.augmentation_analysis_caches(w.set),
        data=W.paths.data_folder("sts"),
    output:
        W.paths.pattern("pretrained_augmentation_analysis", corpus=CORPUS),
    params:
        code=code("evaluate/analysis.py"),
        data=lambda w, input: os.path.dirname(input.data),
        analysis=AUGMENTATION_ANALYSIS,
        hub_offline=HUB_OFFLINE,
        scale=SCALE,
    threads: EVAL_THREADS
    resources:
        **job_resources("augmentation_analysis_pretrained"),
    log:
        W.paths.log("pretrained_augmentation_analysis"),
    conda:
        "../envs/train.yaml"
    shell:
        "OMP_NUM_THREADS={threads} HF_HUB_OFFLINE={params.hub_offline} python -m sentaug.cli evaluate analysis "
        "{params.analysis} --model {input.model} --pooler {wildcards.pooler} --data {params.data} "
        "--augmentations {input.caches} --scale {params.scale} --out {output} > {log} 2>&1"


rule augmentation_analysis_run:
    """The same for a trained run, under its eval pooler."""
    input:
        model=lambda w: run_dir(w.paper, w.backbone, w.method, w.seed),
        caches=lambda w: W.paths.augmentation_analysis_caches(w.set),
        data=W.paths.data_folder("sts"),
    output:
        W.paths.pattern("run_augmentation_analysis", corpus=CORPUS),
    params:
        code=code("evaluate/analysis.py"),
        pooler=lambda w: run_spec(w)["eval_pooler"],
        data=lambda w, input: os.path.dirname(input.data),
        analysis=AUGMENTATION_ANALYSIS,
        hub_offline=HUB_OFFLINE,
        scale=SCALE,
    threads: EVAL_THREADS
    resources:
        **job_resources("augmentation_analysis_run"),
    log:
        W.paths.log("run_augmentation_analysis"),
    conda:
        "../envs/train.yaml"
    shell:
        "OMP_NUM_THREADS={threads} HF_HUB_OFFLINE={params.hub_offline} python -m sentaug.cli evaluate analysis "
        "{params.analysis} --model {input.model} --pooler {params.pooler} --data {params.data} "
        "--augmentations {input.caches} --scale {params.scale} --out {output} > {log} 2>&1"


rule projection_pretrained:
    """2-D PCA / t-SNE of originals and their augmentations (an augmentation set, or one augmentation) under a
    pre-trained backbone (AugCSE Figs. 2-4)."""
    input:
        model=lambda w: backbone_dir(w.backbone),
        caches=lambda w: W.paths.projection_caches(w.augs),
    output:
        W.paths.pattern("pretrained_projection", corpus=CORPUS),
    params:
        code=code("evaluate/projection.py"),
        labels=lambda w: W.paths.projection_augmentations(w.augs),
        scale=SCALE,
    wildcard_constraints:
        augs=r"[^/]+",
        projection="pca|tsne",
        sample=r"\d+",
    threads: EVAL_THREADS
    resources:
        **job_resources("projection_pretrained"),
    log:
        W.paths.log("pretrained_projection"),
    conda:
        "../envs/train.yaml"
    shell:
        "OMP_NUM_THREADS={threads} python -m sentaug.cli project --model {input.model} --pooler {wildcards.pooler} "
        "--caches {input.caches} --labels {params.labels} --method {wildcards.projection} "
        "--sample {wildcards.sample} --scale {params.scale} --out {output} > {log} 2>&1"


rule projection_run:
    """The same for a trained run, under its eval pooler."""
    input:
        model=lambda w: run_dir(w.paper, w.backbone, w.method, w.seed),
        caches=lambda w: W.paths.projection_caches(w.augs),
    output:
        W.paths.pattern("run_projection", corpus=CORPUS),
    params:
        code=code("evaluate/projection.py"),
        labels=lambda w: W.paths.projection_augmentations(w.augs),
        pooler=lambda w: run_spec(w)["eval_pooler"],
        scale=SCALE,
    wildcard_constraints:
        augs=r"[^/]+",
        projection="pca|tsne",
        sample=r"\d+",
    threads: EVAL_THREADS
    resources:
        **job_resources("projection_run"),
    log:
        W.paths.log("run_projection"),
    conda:
        "../envs/train.yaml"
    shell:
        "OMP_NUM_THREADS={threads} python -m sentaug.cli project --model {input.model} --pooler {params.pooler} "
        "--caches {input.caches} --labels {params.labels} --method {wildcards.projection} "
        "--sample {wildcards.sample} --scale {params.scale} --out {output} > {log} 2>&1"
