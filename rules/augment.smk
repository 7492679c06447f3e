# Stage 2: augmentation caches. The corpus is parsed once with spaCy; every parse-based augmentation
# reads that parse. One parquet (+ stats JSON) per (corpus, augmentation, seed).


rule parse:
    input:
        corpus=lambda w: corpus_file(w.corpus),
        code=code("augment/parse.py", "data/corpus.py"),
    output:
        f"{R}/parse/{{corpus}}.spacy",
    params:
        model=config.get("spacy_model", "en_core_web_sm"),
    threads: config.get("workers", 1)
    log:
        f"{R}/logs/parse/{{corpus}}.log",
    conda:
        "../envs/augment.yaml"
    shell:
        "{SENTAUG} parse --corpus {input.corpus} --out {output} --model {params.model} --workers {threads} 2> {log}"


def _resolve_param(value):
    """`backbone:<paper backbone>` (or `backbone:masked_lm`) in an augmentation's parameters stands for a
    backbone folder of this scale (CARDS's RoBERTa tokenizer, VaSCL's CTxt model; `sc.augmentation_backbone`)."""
    if isinstance(value, str) and value.startswith("backbone:"):
        return backbone_dir(sc.augmentation_backbone(config, value))
    return value


def _augmentation(w):
    spec = dict(config["augmentations"][w.augmentation])
    op = spec.pop("op")
    return op, {k: _resolve_param(v) for k, v in spec.items()}


def _augmentation_backbones(w):
    """Backbone folders an augmentation's parameters name (inputs, so they are built first)."""
    raw = config["augmentations"][w.augmentation].values()
    return sorted({_resolve_param(v) for v in raw if isinstance(v, str) and v.startswith("backbone:")})


rule augment:
    input:
        corpus=lambda w: corpus_file(w.corpus),
        parse=f"{R}/parse/{{corpus}}.spacy",
        code=code("augment"),
        backbones=_augmentation_backbones,
    output:
        cache=f"{R}/augment/{{corpus}}/{{augmentation}}/seed{{seed}}.parquet",
        stats=f"{R}/augment/{{corpus}}/{{augmentation}}/seed{{seed}}.json",
    params:
        op=lambda w: _augmentation(w)[0],
        extra=lambda w: " ".join(f"--param {k}={json.dumps(v)}" for k, v in _augmentation(w)[1].items()),
        model=config.get("spacy_model", "en_core_web_sm"),
    threads: config.get("workers", 1)
    log:
        f"{R}/logs/augment/{{corpus}}/{{augmentation}}/seed{{seed}}.log",
    conda:
        "../envs/augment.yaml"
    shell:
        "{SENTAUG} augment {params.op} --corpus {input.corpus} --parse {input.parse} --seed {wildcards.seed} "
        "--workers {threads} --spacy-model {params.model} {params.extra} --out {output.cache} 2> {log}"
