# Stage 3: backbones and training. One trainer for every method; a run is (paper, backbone, method, seed).
# On a cluster (profiles/slurm) training jobs ask for a GPU at paper scale, where the corpus and caches are
# tokenized once per backbone (results/tokens/<corpus>/<backbone>/<len...>/) for every run to read.


rule backbone:
    output:
        directory(W.paths.pattern("backbone")),
    params:
        code=code("models/backbones.py"),
        # the entry as built (where its pin was read is no part of it: a new source rebuilds nothing)
        spec=lambda w: json.dumps({k: v for k, v in config["backbones"][w.backbone].items() if k != "revision_source"}),
        mirror=f"--model-mirror {config['data']['model_mirror']}" if config["data"].get("model_mirror") else "",
    message:
        "backbone {wildcards.backbone}"
    log:
        W.paths.log("backbone"),
    conda:
        "../envs/train.yaml"
    shell:
        "python -m sentaug.cli backbone {wildcards.backbone} --spec {params.spec:q} {params.mirror} "
        "--out {output} 2> {log}"


rule nli_triplets:
    """NLI (premise, entailment, contradiction) triplets of the nli training source (AugCSE Tables 2, 14):
    `<set>.csv`, or `<set>.as_<other>.csv` sampled down to the other set's size."""
    input:
        data=lambda w: W.paths.triplets_inputs(w.name),
    output:
        csv=W.paths.pattern("triplets"),
        stats=W.paths.pattern("triplets_stats"),
    params:
        code=code("data/triplets.py"),
        sets=lambda w: " --sample-as ".join(w.name.split(".as_")),   # <set> [--sample-as <other set>]
        data=lambda w: data_root(w.origin),
    log:
        W.paths.log("triplets"),
    conda:
        "../envs/base.yaml"
    shell:
        "python -m sentaug.cli nli-triplets --set {params.sets} --data {params.data} "
        "--out {output.csv} > {log} 2>&1"


rule tokenize_corpus:
    """Token ids of every corpus line under a backbone's tokenizer, computed once for all its runs."""
    input:
        texts=lambda w: corpus_file(w.corpus),
        backbone=lambda w: backbone_dir(w.backbone),
    output:
        W.paths.pattern("corpus_tokens"),
    params:
        code=code("models/tokens.py"),
        args=_tokenize_args,
    wildcard_constraints:
        corpus=r"[^/]+",
        key=r"len\d+[^/]*",
    log:
        W.paths.log("corpus_tokens"),
    conda:
        "../envs/train.yaml"
    shell:
        "python -m sentaug.cli tokenize --texts {input.texts} --backbone {input.backbone} {params.args} "
        "--out {output} 2> {log}"


rule tokenize_cache:
    """Token ids of an augmentation cache's augmented sentences, likewise."""
    input:
        texts=lambda w: cache_file(w.augmentation, w.seed, w.corpus),
        backbone=lambda w: backbone_dir(w.backbone),
    output:
        W.paths.pattern("cache_tokens"),
    params:
        code=code("models/tokens.py"),
        args=_tokenize_args,
    wildcard_constraints:
        corpus=r"[^/]+",
        key=r"len\d+[^/]*",
        augmentation=r"[^/]+",
    log:
        W.paths.log("cache_tokens"),
    conda:
        "../envs/train.yaml"
    shell:
        "python -m sentaug.cli tokenize --texts {input.texts} --backbone {input.backbone} {params.args} "
        "--out {output} 2> {log}"


rule train:
    input:
        corpus=lambda w: W.paths.train_corpus(run_spec(w)),
        positives=_positives,
        index=_index,
        tokens=_tokens,
        backbone=lambda w: backbone_dir(w.backbone),
        dev=lambda w: W.paths.dev_data(run_spec(w)),   # STS-B dev (CNSD dev for a Chinese backbone)
    output:
        directory(W.paths.pattern("run")),
    params:
        code=_train_code,
        spec=lambda w: W.paths.spec_file(run_spec(w)),   # results/specs/<digest>.json
        modules=_train_modules,
        positives=lambda w, input: f"--positives {input.positives}" if input.positives else "",
        index=lambda w, input: f"--index {input.index}" if input.index else "",
        tokens=lambda w, input: f"--tokens {input.tokens}" if input.tokens else "",
        data=lambda w, input: os.path.dirname(input.dev),
        launcher=TRAIN_LAUNCHER[0],
        process_threads=TRAIN_LAUNCHER[1],
    threads: TRAIN_RESOURCES["threads"]
    group: TRAIN_GROUP
    resources:
        **job_resources("train"),
        runtime=train_runtime,
    message:
        "train {wildcards.method} on {wildcards.backbone}, seed {wildcards.seed} ({wildcards.paper})"
    log:
        W.paths.log("run"),
    conda:
        "../envs/train.yaml"
    shell:
        # --resume: a preempted or requeued job continues from its last checkpoint (same result). With more
        # than one GPU the launcher is torchrun, one process per GPU, each with its share of the threads.
        "OMP_NUM_THREADS={params.process_threads} {params.launcher} train --spec {params.spec} "
        "--corpus {input.corpus} {params.positives} {params.index} {params.tokens} {params.modules} "
        "--backbone {input.backbone} --dev-data {params.data} --out {output} --resume 2> {log}"
