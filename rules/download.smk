# Stage 1: data. Official addresses with sha256 pins, or the local mirror (data.mirror / $SENTAUG_MIRROR),
# or the bundled demo data. Outputs are laid out like ../shared/data under results/data/<origin>/.


def _mirror_flag():
    return f"--mirror {config['data']['mirror']}" if config["data"].get("mirror") else ""


def _download_code(w):
    extra = ["resources/demo/MANIFEST.sha256"] if w.origin == "demo" else []
    return code("data/download.py", "data/sources.yaml", *extra)


rule download_senteval:
    output:
        sts=directory(f"{R}/data/{{origin}}/sts"),
        sick=directory(f"{R}/data/{{origin}}/sick"),
    input:
        _download_code,
    params:
        mirror=_mirror_flag(),
    log:
        f"{R}/logs/download/{{origin}}/senteval.log",
    conda:
        "../envs/base.yaml"
    shell:
        "{SENTAUG} download senteval --origin {wildcards.origin} --out {R}/data/{wildcards.origin} "
        "{params.mirror} 2> {log}"


rule download_corpus:
    output:
        f"{R}/data/{{origin}}/wiki/{{corpus}}.txt",
    input:
        _download_code,
    params:
        mirror=_mirror_flag(),
    log:
        f"{R}/logs/download/{{origin}}/{{corpus}}.log",
    conda:
        "../envs/base.yaml"
    shell:
        "{SENTAUG} download {wildcards.corpus} --origin {wildcards.origin} --out {R}/data/{wildcards.origin} "
        "{params.mirror} 2> {log}"


rule download_suite_data:
    """Data of the downstream suites (sources `transfer`, `clustering`, `intent`: mirror only, sha256-pinned;
    `glue`: official zips or mirror; `nli`: SNLI in SentEval layout, mirror only)."""
    output:
        directory(f"{R}/data/official/{{folder}}"),
    input:
        code("data/download.py", "data/sources.yaml"),
    params:
        mirror=_mirror_flag(),
    wildcard_constraints:
        folder="transfer|clustering|intent|glue|nli",
    log:
        f"{R}/logs/download/official/{{folder}}.log",
    conda:
        "../envs/base.yaml"
    shell:
        "{SENTAUG} download {wildcards.folder} --origin official --out {R}/data/official {params.mirror} 2> {log}"
