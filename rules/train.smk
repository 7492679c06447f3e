# Stage 3: backbones and training. One trainer for every method; a run is (paper, backbone, method, seed).
# On a cluster (profiles/slurm) training jobs ask for what scales.<scale>.train_resources says (a GPU at paper scale).


rule backbone:
    input:
        code("models/backbones.py"),
    output:
        directory(f"{R}/backbones/{{backbone}}"),
    params:
        spec=lambda w: json.dumps(config["backbones"][w.backbone]),
        mirror=f"--model-mirror {config['data']['model_mirror']}" if config["data"].get("model_mirror") else "",
    log:
        f"{R}/logs/backbone/{{backbone}}.log",
    conda:
        "../envs/train.yaml"
    shell:
        "python -m sentaug.cli backbone {wildcards.backbone} --spec {params.spec:q} {params.mirror} "
        "--out {output} 2> {log}"


rule train:
    input:
        corpus=lambda w: corpus_file(run_spec(w)["corpus"]),
        positives=_positives,
        index=_index,
        backbone=lambda w: backbone_dir(w.backbone),
        dev=f"{data_root()}/sts",
        code=code("train", "objectives", "models/encoder.py", "models/heads.py", "models/poolers.py",
                  "evaluate/sts.py", "data/senteval.py", "index/sampling.py"),
    output:
        directory(f"{R}/runs/{SCALE}/{{paper}}/{{backbone}}/{{method}}/seed{{seed}}"),
    params:
        spec=lambda w: W.spec_file(w.paper, w.backbone, w.method, w.seed),
        positives=lambda w, input: f"--positives {input.positives}" if input.positives else "",
        index=lambda w, input: f"--index {input.index}" if input.index else "",
        data=lambda w, input: os.path.dirname(input.dev),
        launcher=TRAIN_LAUNCHER[0],
        process_threads=TRAIN_LAUNCHER[1],
    threads: TRAIN_RESOURCES["threads"]
    resources:
        gpu=TRAIN_RESOURCES["gpu"],
        runtime=TRAIN_RESOURCES["runtime"],
        mem_mb=TRAIN_RESOURCES["mem_mb"],
    log:
        f"{R}/logs/train/{SCALE}/{{paper}}/{{backbone}}/{{method}}/seed{{seed}}.log",
    conda:
        "../envs/train.yaml"
    shell:
        # --resume: a preempted or requeued job continues from its last checkpoint (same result). With more
        # than one GPU the launcher is torchrun, one process per GPU, each with its share of the threads.
        "OMP_NUM_THREADS={params.process_threads} {params.launcher} train --spec {params.spec} "
        "--corpus {input.corpus} {params.positives} {params.index} --backbone {input.backbone} "
        "--dev-data {params.data} --out {output} --resume 2> {log}"
