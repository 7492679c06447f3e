# Stage 1: data. Official addresses with sha256 pins, or the local mirror (data.mirror / $SENTAUG_MIRROR),
# or the bundled demo data. Outputs are laid out like ../shared/data under results/data/<origin>/.


rule download_senteval:
    output:
        sts=directory(f"{R}/data/{{origin}}/sts"),
        sick=directory(f"{R}/data/{{origin}}/sick"),
    input:
        _download_code,
    params:
        mirror=_mirror_flag(),
        out=lambda w, output: os.path.dirname(output.sts),
    log:
        f"{R}/logs/download/{{origin}}/senteval.log",
    conda:
        "../envs/base.yaml"
    shell:
        "python -m sentaug.cli download senteval --origin {wildcards.origin} --out {params.out} "
        "{params.mirror} 2> {log}"


rule download_corpus:
    output:
        f"{R}/data/{{origin}}/wiki/{{corpus}}.txt",
    input:
        _download_code,
    params:
        mirror=_mirror_flag(),
        out=lambda w, output: os.path.dirname(os.path.dirname(output[0])),   # <root>/wiki/<corpus>.txt
    log:
        f"{R}/logs/download/{{origin}}/{{corpus}}.log",
    conda:
        "../envs/base.yaml"
    shell:
        "python -m sentaug.cli download {wildcards.corpus} --origin {wildcards.origin} --out {params.out} "
        "{params.mirror} 2> {log}"


rule download_suite_data:
    """Data of the downstream suites (sources `transfer`, `clustering`, `intent`: mirror only, sha256-pinned;
    `glue`: official zips or mirror)."""
    output:
        directory(f"{R}/data/official/{{folder}}"),
    input:
        code("data/download.py", "data/sources.yaml"),
    params:
        mirror=_mirror_flag(),
        out=lambda w, output: os.path.dirname(output[0]),
    wildcard_constraints:
        folder="transfer|clustering|intent|glue",
    log:
        f"{R}/logs/download/official/{{folder}}.log",
    conda:
        "../envs/base.yaml"
    shell:
        "python -m sentaug.cli download {wildcards.folder} --origin official --out {params.out} {params.mirror} "
        "2> {log}"
