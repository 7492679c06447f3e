# Stage 5: paper tables and figures, expanded from papers/<paper>.yaml.


rule table:
    input:
        paper="papers/{paper}.yaml",
        results=lambda w: [f for files in table_inputs(w.paper, w.table).values() for f in files],
        code=code("report"),
    output:
        tex=f"{R}/tables/{{paper}}/{{table}}.tex",
        csv=f"{R}/tables/{{paper}}/{{table}}.csv",
    params:
        inputs=lambda w: json.dumps({"rows": table_inputs(w.paper, w.table), "meta": W.table_meta()}),
        scale=SCALE,
    log:
        f"{R}/logs/report/{{paper}}/{{table}}.log",
    conda:
        "../envs/base.yaml"
    shell:
        "python -m sentaug.cli report table --paper-file {input.paper} --table {wildcards.table} "
        "--inputs {params.inputs:q} --scale {params.scale} --out {output.tex} > {log} 2>&1"


rule figure:
    input:
        paper="papers/{paper}.yaml",
        results=lambda w: W.figure_targets(w.paper, w.figure),
        code=code("report"),
    output:
        pdf=f"{R}/figures/{{paper}}/{{figure}}.pdf",
        png=f"{R}/figures/{{paper}}/{{figure}}.png",
        csv=f"{R}/figures/{{paper}}/{{figure}}.csv",
    params:
        inputs=lambda w: json.dumps({"panels": W.figure_points(w.paper, w.figure), "meta": W.table_meta()}),
        scale=SCALE,
    log:
        f"{R}/logs/report/{{paper}}/{{figure}}.log",
    conda:
        "../envs/base.yaml"
    shell:
        "python -m sentaug.cli report figure --paper-file {input.paper} --figure {wildcards.figure} "
        "--inputs {params.inputs:q} --scale {params.scale} --out {output.pdf} > {log} 2>&1"


# Augmentation census (census_rows in common.smk): every declared augmentation on the scale's corpus (first
# seed), with the cosine between original and augmented under the scale's bert-base-uncased stand-in.
rule augment_cosine:
    input:
        cache=f"{R}/augment/{{corpus}}/{{augmentation}}/seed{{seed}}.parquet",
        model=lambda w: backbone_dir(w.backbone),
        code=code("report/census.py", "models/encoder.py", "models/poolers.py"),
    output:
        f"{R}/census/{{corpus}}/{{augmentation}}/seed{{seed}}.{{backbone}}.json",
    params:
        max_lines=2000,
    threads: 2
    log:
        f"{R}/logs/census/{{corpus}}/{{augmentation}}/seed{{seed}}.{{backbone}}.log",
    conda:
        "../envs/train.yaml"
    shell:
        "OMP_NUM_THREADS={threads} python -m sentaug.cli augment-cosine --cache {input.cache} --model {input.model} "
        "--max-lines {params.max_lines} --out {output} 2> {log}"


rule census:
    input:
        files=[f for row in census_rows().values() for f in row.values()],
        code=code("report/census.py"),
    output:
        tex=f"{R}/tables/augmentations.tex",
        csv=f"{R}/tables/augmentations.csv",
    params:
        inputs=lambda w: json.dumps({"rows": census_rows(), "meta": {"corpus": CORPUS, "seed": SEEDS[0],
                                                                     "backbone": CENSUS_BACKBONE}}),
        scale=SCALE,
    log:
        f"{R}/logs/report/census.log",
    conda:
        "../envs/base.yaml"
    shell:
        "python -m sentaug.cli report census --inputs {params.inputs:q} --scale {params.scale} --out {output.tex} "
        "> {log} 2>&1"


rule tokenization_effects:
    input:
        corpus=lambda w: corpus_file(w.corpus),
        tokenizer=lambda w: backbone_dir(w.backbone),
        code=code("augment/cards.py"),
    output:
        f"{R}/analysis/tokenization_effects/{{corpus}}/{{backbone}}.json",
    log:
        f"{R}/logs/analysis/tokenization_effects/{{corpus}}/{{backbone}}.log",
    conda:
        "../envs/augment.yaml"
    shell:
        "python -m sentaug.cli tokenization-effects --corpus {input.corpus} --tokenizer {input.tokenizer} "
        "--out {output} 2> {log}"
