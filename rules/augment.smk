# Stage 2: augmentation caches. The corpus is parsed once with spaCy; every parse-based augmentation
# reads that parse. One parquet (+ stats JSON) per (corpus, augmentation, seed).


rule parse:
    input:
        corpus=lambda w: corpus_file(w.corpus),
    output:
        W.paths.pattern("parse"),
    params:
        code=code("augment/parse.py"),
        model=lambda w: W.paths.spacy_model(w.corpus),
    threads: WORKERS
    message:
        "parse {wildcards.corpus} with spaCy"
    log:
        W.paths.log("parse"),
    conda:
        "../envs/augment.yaml"
    shell:
        "python -m sentaug.cli parse --corpus {input.corpus} --out {output} --model {params.model} "
        "--workers {threads} 2> {log}"


rule augment:
    input:
        corpus=lambda w: corpus_file(w.corpus),
        parse=lambda w: W.paths.parse_file(w.corpus),
        backbones=lambda w: _augmentation(w)[2],   # built first
    output:
        cache=W.paths.pattern("cache"),
        stats=W.paths.pattern("cache_stats"),
    params:
        code=_augmentation_code,
        op=lambda w: _augmentation(w)[0],
        extra=_augmentation_args,
        model=lambda w: W.paths.spacy_model(w.corpus),
    threads: WORKERS
    message:
        "augment {wildcards.corpus}: {wildcards.augmentation}, seed {wildcards.seed}"
    log:
        W.paths.log("cache"),
    conda:
        "../envs/augment.yaml"
    shell:
        "python -m sentaug.cli augment {params.op} --corpus {input.corpus} --parse {input.parse} "
        "--seed {wildcards.seed} --workers {threads} --spacy-model {params.model} {params.extra} "
        "--out {output.cache} 2> {log}"
