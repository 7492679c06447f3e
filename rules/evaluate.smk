# Stage 4: evaluation, SimCSE's SentEval protocol (STS12-16 "all", STS-B and SICK-R test, unsupervised).


rule evaluate_run:
    input:
        model=lambda w: run_dir(w.paper, w.backbone, w.method, w.seed),
        sts=f"{data_root()}/sts",
        sick=f"{data_root()}/sick",
        code=code("evaluate/sts.py", "data/senteval.py", "models/encoder.py", "models/poolers.py"),
    output:
        f"{R}/eval/{SCALE}/{{paper}}/{{backbone}}/{{method}}/seed{{seed}}/sts.json",
    params:
        pooler=lambda w: run_spec(w)["eval_pooler"],
        data=data_root(),
    threads: 2
    log:
        f"{R}/logs/eval/{SCALE}/{{paper}}/{{backbone}}/{{method}}/seed{{seed}}.log",
    conda:
        "../envs/train.yaml"
    shell:
        "OMP_NUM_THREADS={threads} {SENTAUG} evaluate sts --model {input.model} --pooler {params.pooler} "
        "--data {params.data} --scale {SCALE} --out {output} > {log} 2>&1"


rule evaluate_pretrained:
    input:
        model=lambda w: backbone_dir(w.backbone),
        sts=f"{R}/data/{{origin}}/sts",
        sick=f"{R}/data/{{origin}}/sick",
        code=code("evaluate/sts.py", "data/senteval.py", "models/encoder.py", "models/poolers.py"),
    output:
        f"{R}/eval/pretrained/{{origin}}/{{backbone}}/{{pooler}}.json",
    threads: 2
    log:
        f"{R}/logs/eval/pretrained/{{origin}}/{{backbone}}/{{pooler}}.log",
    conda:
        "../envs/train.yaml"
    shell:
        "OMP_NUM_THREADS={threads} {SENTAUG} evaluate sts --model {input.model} --pooler {wildcards.pooler} "
        "--data {R}/data/{wildcards.origin} --scale {SCALE} --out {output} > {log} 2>&1"
