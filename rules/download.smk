# Stage 1: data. Official addresses with sha256 pins, or the local mirror (data.mirror / $SENTAUG_MIRROR),
# or the bundled demo data. Outputs are laid out like ../shared/data under results/data/<origin>/.


rule download_senteval:
    output:
        sts=directory(W.pattern("data_folder", folder="sts")),
        sick=directory(W.pattern("data_folder", folder="sick")),
    params:
        code=_download_code,
        mirror=_mirror_flag(),
        out=lambda w, output: os.path.dirname(output.sts),
    message:
        "download STS/SICK ({wildcards.origin})"
    log:
        f"{R}/logs/download/{{origin}}/senteval.log",
    conda:
        "../envs/base.yaml"
    shell:
        "python -m sentaug.cli download senteval --origin {wildcards.origin} --out {params.out} "
        "{params.mirror} 2> {log}"


rule download_corpus:
    output:
        W.pattern("corpus"),
    params:
        code=_download_code,
        mirror=_mirror_flag(),
        out=lambda w, output: os.path.dirname(os.path.dirname(output[0])),   # <root>/wiki/<corpus>.txt
    message:
        "download corpus {wildcards.corpus} ({wildcards.origin})"
    log:
        f"{R}/logs/download/{{origin}}/{{corpus}}.log",
    conda:
        "../envs/base.yaml"
    shell:
        "python -m sentaug.cli download {wildcards.corpus} --origin {wildcards.origin} --out {params.out} "
        "{params.mirror} 2> {log}"


rule download_data:
    """A data folder named as its source in src/sentaug/data/sources.yaml (transfer, clustering, intent,
    glue/<TASK>, nli/anli, nli/snli_senteval, nli/simcse, cnsd): from the official addresses or the mirror,
    sha256-pinned; origin `demo`: the bundled demo data in the same layout."""
    output:
        directory(W.pattern("data_folder")),
    params:
        code=_download_code,
        mirror=_mirror_flag(),
        root=lambda w: data_root(w.origin),
    wildcard_constraints:
        folder="|".join(re.escape(f) for f in data_folders()),
    message:
        "download {wildcards.folder} ({wildcards.origin})"
    log:
        f"{R}/logs/download/{{origin}}/{{folder}}.log",
    conda:
        "../envs/base.yaml"
    shell:
        "python -m sentaug.cli download {wildcards.folder} --origin {wildcards.origin} --out {params.root} "
        "{params.mirror} 2> {log}"


rule data_stats:
    """Statistics of the evaluation data, from the files (SDA Table 2, VaSCL Table 4)."""
    output:
        W.pattern("data_stats"),
    input:
        data=lambda w: W.data_stats_inputs(w.what, w.origin),
    params:
        code=code("data/stats.py"),
        root=lambda w: data_root(w.origin),
    wildcard_constraints:
        what="sts|clustering",
    message:
        "data statistics: {wildcards.what} ({wildcards.origin})"
    log:
        f"{R}/logs/analysis/data_stats/{{origin}}/{{what}}.log",
    conda:
        "../envs/base.yaml"
    shell:
        "python -m sentaug.cli data-stats {wildcards.what} --data {params.root} --out {output} 2> {log}"
