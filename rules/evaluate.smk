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
        data=lambda w, input: os.path.dirname(input.sts),
        scale=SCALE,
    threads: 2
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
        code=code("evaluate/sts.py", "data/senteval.py", "models/encoder.py", "models/poolers.py"),
    output:
        f"{R}/eval/{SCALE}/{{paper}}/{{backbone}}/{{method}}/seed{{seed}}/sts.{{pooler}}.json",
    params:
        data=lambda w, input: os.path.dirname(input.sts),
        scale=SCALE,
    threads: 2
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
        code=code("evaluate/sts.py", "data/senteval.py", "models/encoder.py", "models/poolers.py"),
    output:
        f"{R}/eval/pretrained/{{origin}}/{{backbone}}/{{pooler}}.json",
    params:
        data=lambda w, input: os.path.dirname(input.sts),
        scale=SCALE,
    threads: 2
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
        code=lambda w: suite_code(w.suite),
    output:
        f"{R}/eval/{SCALE}/{{paper}}/{{backbone}}/{{method}}/seed{{seed}}/{{suite}}.json",
    params:
        pooler=lambda w: run_spec(w)["eval_pooler"],
        data=data_root("official"),
        extra=lambda w: SUITE_ARGS.get(w.suite, ""),
        scale=SCALE,
    threads: 2
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
        code=lambda w: suite_code(w.suite),
    output:
        f"{R}/eval/pretrained/{{origin}}/{{backbone}}/{{suite}}/{{pooler}}.json",
    params:
        data=lambda w: data_root(w.origin),
        extra=lambda w: SUITE_ARGS.get(w.suite, ""),
        scale=SCALE,
    threads: 2
    log:
        f"{R}/logs/eval/pretrained/{{origin}}/{{backbone}}/{{suite}}/{{pooler}}.log",
    conda:
        "../envs/train.yaml"
    shell:
        "OMP_NUM_THREADS={threads} python -m sentaug.cli evaluate {wildcards.suite} --model {input.model} "
        "--pooler {wildcards.pooler} --data {params.data} --scale {params.scale} {params.extra} "
        "--out {output} > {log} 2>&1"
