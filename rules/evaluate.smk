# Stage 4: evaluation, SimCSE's SentEval protocol (STS12-16 "all", STS-B and SICK-R test, unsupervised).


rule evaluate_run:
    input:
        model=lambda w: run_dir(w.paper, w.backbone, w.method, w.seed),
        sts=f"{data_root()}/sts",
        sick=f"{data_root()}/sick",
    output:
        f"{R}/eval/{SCALE}/{{paper}}/{{backbone}}/{{method}}/seed{{seed}}/sts.json",
    params:
        code=code("evaluate/sts.py"),
        pooler=lambda w: run_spec(w)["eval_pooler"],
        data=lambda w, input: os.path.dirname(input.sts),
        scale=SCALE,
    threads: EVAL_THREADS
    message:
        "evaluate sts: {wildcards.method} on {wildcards.backbone}, seed {wildcards.seed}"
    log:
        f"{R}/logs/eval/{SCALE}/{{paper}}/{{backbone}}/{{method}}/seed{{seed}}.log",
    conda:
        "../envs/train.yaml"
    shell:
        "OMP_NUM_THREADS={threads} python -m sentaug.cli evaluate sts --model {input.model} "
        "--pooler {params.pooler} --data {params.data} --scale {params.scale} --out {output} > {log} 2>&1"


rule evaluate_run_pooler:
    """A trained run under another pooler than its eval pooler (table rows with `pooler:`, CLEAR Table 2)."""
    input:
        model=lambda w: run_dir(w.paper, w.backbone, w.method, w.seed),
        sts=f"{data_root()}/sts",
        sick=f"{data_root()}/sick",
    output:
        f"{R}/eval/{SCALE}/{{paper}}/{{backbone}}/{{method}}/seed{{seed}}/sts.{{pooler}}.json",
    params:
        code=code("evaluate/sts.py"),
        data=lambda w, input: os.path.dirname(input.sts),
        scale=SCALE,
    threads: EVAL_THREADS
    message:
        "evaluate sts ({wildcards.pooler}): {wildcards.method} on {wildcards.backbone}, seed {wildcards.seed}"
    log:
        f"{R}/logs/eval/{SCALE}/{{paper}}/{{backbone}}/{{method}}/seed{{seed}}.{{pooler}}.log",
    conda:
        "../envs/train.yaml"
    shell:
        "OMP_NUM_THREADS={threads} python -m sentaug.cli evaluate sts --model {input.model} "
        "--pooler {wildcards.pooler} --data {params.data} --scale {params.scale} --out {output} > {log} 2>&1"


rule evaluate_pretrained:
    input:
        model=lambda w: backbone_dir(w.backbone),
        sts=f"{R}/data/{{origin}}/sts",
        sick=f"{R}/data/{{origin}}/sick",
    output:
        f"{R}/eval/pretrained/{{origin}}/{{backbone}}/{{pooler}}.json",
    params:
        code=code("evaluate/sts.py"),
        data=lambda w, input: os.path.dirname(input.sts),
        scale=SCALE,
    threads: EVAL_THREADS
    message:
        "evaluate sts: pre-trained {wildcards.backbone} ({wildcards.pooler})"
    log:
        f"{R}/logs/eval/pretrained/{{origin}}/{{backbone}}/{{pooler}}.log",
    conda:
        "../envs/train.yaml"
    shell:
        "OMP_NUM_THREADS={threads} python -m sentaug.cli evaluate sts --model {input.model} "
        "--pooler {wildcards.pooler} --data {params.data} --scale {params.scale} --out {output} > {log} 2>&1"


rule evaluate_suite:
    """A downstream suite (SUITES: transfer, clustering, intent, ...) on a trained run, its eval pooler."""
    input:
        model=lambda w: run_dir(w.paper, w.backbone, w.method, w.seed),
        data=lambda w: suite_data(w.suite),
    output:
        f"{R}/eval/{SCALE}/{{paper}}/{{backbone}}/{{method}}/seed{{seed}}/{{suite}}.json",
    params:
        code=lambda w: code(f"evaluate/{w.suite}.py"),
        pooler=lambda w: run_spec(w)["eval_pooler"],
        data=data_root(),
        extra=lambda w: SUITE_ARGS.get(w.suite, ""),
        scale=SCALE,
    threads: EVAL_THREADS
    message:
        "evaluate {wildcards.suite}: {wildcards.method} on {wildcards.backbone}, seed {wildcards.seed}"
    log:
        f"{R}/logs/eval/{SCALE}/{{paper}}/{{backbone}}/{{method}}/seed{{seed}}/{{suite}}.log",
    conda:
        "../envs/train.yaml"
    shell:
        "OMP_NUM_THREADS={threads} python -m sentaug.cli evaluate {wildcards.suite} --model {input.model} "
        "--pooler {params.pooler} --data {params.data} --scale {params.scale} {params.extra} --out {output} "
        "> {log} 2>&1"


rule evaluate_suite_pretrained:
    """A downstream suite on a pretrained backbone with a given pooler (e.g. the MiniLM reference numbers)."""
    input:
        model=lambda w: backbone_dir(w.backbone),
        data=lambda w: suite_data(w.suite, w.origin),
    output:
        f"{R}/eval/pretrained/{{origin}}/{{backbone}}/{{suite}}/{{pooler}}.json",
    params:
        code=lambda w: code(f"evaluate/{w.suite}.py"),
        data=lambda w: data_root(w.origin),
        extra=lambda w: SUITE_ARGS.get(w.suite, ""),
        scale=SCALE,
    threads: EVAL_THREADS
    message:
        "evaluate {wildcards.suite}: pre-trained {wildcards.backbone} ({wildcards.pooler})"
    log:
        f"{R}/logs/eval/pretrained/{{origin}}/{{backbone}}/{{suite}}/{{pooler}}.log",
    conda:
        "../envs/train.yaml"
    shell:
        "OMP_NUM_THREADS={threads} python -m sentaug.cli evaluate {wildcards.suite} --model {input.model} "
        "--pooler {wildcards.pooler} --data {params.data} --scale {params.scale} {params.extra} "
        "--out {output} > {log} 2>&1"


rule evaluate_run_lowercase:
    """A trained run with every STS sentence lower-cased (CARDS Table 4: upper case ignored in evaluation)."""
    input:
        model=lambda w: run_dir(w.paper, w.backbone, w.method, w.seed),
        sts=f"{data_root()}/sts",
        sick=f"{data_root()}/sick",
    output:
        f"{R}/eval/{SCALE}/{{paper}}/{{backbone}}/{{method}}/seed{{seed}}/sts_lowercase.json",
    params:
        code=code("evaluate/sts.py"),
        pooler=lambda w: run_spec(w)["eval_pooler"],
        data=lambda w, input: os.path.dirname(input.sts),
        scale=SCALE,
    threads: EVAL_THREADS
    log:
        f"{R}/logs/eval/{SCALE}/{{paper}}/{{backbone}}/{{method}}/seed{{seed}}.lowercase.log",
    conda:
        "../envs/train.yaml"
    shell:
        "OMP_NUM_THREADS={threads} python -m sentaug.cli evaluate sts --model {input.model} "
        "--pooler {params.pooler} --data {params.data} --scale {params.scale} --lowercase --out {output} "
        "> {log} 2>&1"


rule evaluate_glue_pretrained_options:
    """GLUE fine-tuning of a pre-trained backbone with R-drop / switch-case settings (CARDS Table 6); the
    settings are the path component after `glue~` (sentaug.workflow.Workflow.glue_options)."""
    input:
        model=lambda w: backbone_dir(w.backbone),
        data=lambda w: suite_data("glue", w.origin),
    output:
        f"{R}/eval/pretrained/{{origin}}/{{backbone}}/glue~{{options}}/{{pooler}}.json",
    params:
        code=code("evaluate/glue.py"),
        data=lambda w: data_root(w.origin),
        extra=SUITE_ARGS["glue"],
        options=lambda w: W.glue_option_args(w.options),
        scale=SCALE,
    threads: EVAL_THREADS
    log:
        f"{R}/logs/eval/pretrained/{{origin}}/{{backbone}}/glue~{{options}}/{{pooler}}.log",
    conda:
        "../envs/train.yaml"
    shell:
        "OMP_NUM_THREADS={threads} python -m sentaug.cli evaluate glue --model {input.model} "
        "--pooler {wildcards.pooler} --data {params.data} --scale {params.scale} {params.extra} {params.options} "
        "--out {output} > {log} 2>&1"


rule token_pca:
    """CARDS Figure 1: the 2-D PCA of a backbone's token embeddings, each token with its case / sub-token category
    and its frequency in the scale's corpus."""
    input:
        model=lambda w: backbone_dir(w.backbone),
        corpus=lambda w: corpus_file(w.corpus),
    output:
        f"{R}/analysis/token_pca/{{corpus}}/{{backbone}}.json",
    params:
        code=code("evaluate/token_embeddings.py"),
    log:
        f"{R}/logs/analysis/token_pca/{{corpus}}/{{backbone}}.log",
    conda:
        "../envs/train.yaml"
    shell:
        "python -m sentaug.cli token-pca --model {input.model} --corpus {input.corpus} --out {output} 2> {log}"


# Analyses behind figures (sentaug.workflow resolves their paths and inputs; their settings,
# AUGMENTATION_ANALYSIS and HUB_OFFLINE, are in common.smk).
rule augmentation_analysis_pretrained:
    """Cosine, COND-HM, SVG and GPT-2 perplexity difference between each sentence and its augmentation, for
    every augmentation of a set (config augmentation_sets), under a pre-trained backbone and pooler."""
    input:
        model=lambda w: backbone_dir(w.backbone),
        caches=lambda w: W.augmentation_analysis_caches(w.set),
        data=f"{data_root()}/sts",
    output:
        f"{R}/analysis/augmentations/{CORPUS}/{{set}}/pretrained/{{backbone}}/{{pooler}}.json",
    params:
        code=code("evaluate/analysis.py"),
        data=lambda w, input: os.path.dirname(input.data),
        analysis=AUGMENTATION_ANALYSIS,
        hub_offline=HUB_OFFLINE,
        scale=SCALE,
    threads: EVAL_THREADS
    log:
        f"{R}/logs/analysis/augmentations/{{set}}/pretrained/{{backbone}}/{{pooler}}.log",
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
        caches=lambda w: W.augmentation_analysis_caches(w.set),
        data=f"{data_root()}/sts",
    output:
        f"{R}/analysis/augmentations/{CORPUS}/{{set}}/{SCALE}/{{paper}}/{{backbone}}/{{method}}/seed{{seed}}.json",
    params:
        code=code("evaluate/analysis.py"),
        pooler=lambda w: run_spec(w)["eval_pooler"],
        data=lambda w, input: os.path.dirname(input.data),
        analysis=AUGMENTATION_ANALYSIS,
        hub_offline=HUB_OFFLINE,
        scale=SCALE,
    threads: EVAL_THREADS
    log:
        f"{R}/logs/analysis/augmentations/{{set}}/{SCALE}/{{paper}}/{{backbone}}/{{method}}/seed{{seed}}.log",
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
        caches=lambda w: [cache_file(a, SEEDS[0]) for a in W.projection_augmentations(w.augs)],
    output:
        f"{R}/analysis/projections/{CORPUS}/{{augs}}/{{projection}}-{{sample}}/pretrained/{{backbone}}/{{pooler}}.json",
    params:
        code=code("evaluate/projection.py"),
        labels=lambda w: W.projection_augmentations(w.augs),
        scale=SCALE,
    wildcard_constraints:
        augs=r"[^/]+",
        projection="pca|tsne",
        sample=r"\d+",
    threads: EVAL_THREADS
    log:
        f"{R}/logs/analysis/projections/{{augs}}/{{projection}}-{{sample}}/pretrained/{{backbone}}/{{pooler}}.log",
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
        caches=lambda w: [cache_file(a, SEEDS[0]) for a in W.projection_augmentations(w.augs)],
    output:
        f"{R}/analysis/projections/{CORPUS}/{{augs}}/{{projection}}-{{sample}}/{SCALE}/{{paper}}/{{backbone}}/"
        "{method}/seed{seed}.json",
    params:
        code=code("evaluate/projection.py"),
        labels=lambda w: W.projection_augmentations(w.augs),
        pooler=lambda w: run_spec(w)["eval_pooler"],
        scale=SCALE,
    wildcard_constraints:
        augs=r"[^/]+",
        projection="pca|tsne",
        sample=r"\d+",
    threads: EVAL_THREADS
    log:
        f"{R}/logs/analysis/projections/{{augs}}/{{projection}}-{{sample}}/{SCALE}/{{paper}}/{{backbone}}/"
        "{method}/seed{seed}.log",
    conda:
        "../envs/train.yaml"
    shell:
        "OMP_NUM_THREADS={threads} python -m sentaug.cli project --model {input.model} --pooler {params.pooler} "
        "--caches {input.caches} --labels {params.labels} --method {wildcards.projection} "
        "--sample {wildcards.sample} --scale {params.scale} --out {output} > {log} 2>&1"
