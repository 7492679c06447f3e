# Stage 1: data. Official addresses with sha256 pins, or the local mirror (data.mirror / $SENTAUG_MIRROR),
# or the bundled demo data. Outputs are laid out like ../shared/data under results/data/<origin>/.


rule download_senteval:
    output:
        sts=directory(W.paths.pattern("data_folder", folder="sts")),
        sick=directory(W.paths.pattern("data_folder", folder="sick")),
    params:
        code=_download_code,
        mirror=_mirror_flag(),
        out=lambda w, output: os.path.dirname(output.sts),
    wildcard_constraints:
        origin=INSTALLED_ORIGINS,
    message:
        "download STS/SICK ({wildcards.origin})"
    log:
        W.paths.log("data_folder", folder="senteval"),
    conda:
        "../envs/base.yaml"
    shell:
        "python -m sentaug.cli download senteval --origin {wildcards.origin} --out {params.out} "
        "{params.mirror} 2> {log}"


rule download_corpus:
    output:
        W.paths.pattern("corpus"),
    params:
        code=_download_code,
        mirror=_mirror_flag(),
        out=lambda w, output: os.path.dirname(os.path.dirname(output[0])),   # <root>/wiki/<corpus>.txt
    wildcard_constraints:
        origin=INSTALLED_ORIGINS,
    message:
        "download corpus {wildcards.corpus} ({wildcards.origin})"
    log:
        W.paths.log("corpus"),
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
        directory(W.paths.pattern("data_folder")),
    params:
        code=_download_code,
        mirror=_mirror_flag(),
        root=lambda w: data_root(w.origin),
    wildcard_constraints:
        folder="|".join(re.escape(f) for f in data_folders()),
        origin=INSTALLED_ORIGINS,
    message:
        "download {wildcards.folder} ({wildcards.origin})"
    log:
        W.paths.log("data_folder"),
    conda:
        "../envs/base.yaml"
    shell:
        "python -m sentaug.cli download {wildcards.folder} --origin {wildcards.origin} --out {params.root} "
        "{params.mirror} 2> {log}"


rule slice_data:
    """A data folder of a scale that declares `slices:` (the test scale): cut from the installed, pin-checked
    official folder into <results>/data/official-<scale>/ (sentaug.data.slices; a folder the scale declares no
    slice of is copied whole)."""
    input:
        lambda w: W.paths.data_folder(w.folder, origin=W.S["data"]),
    output:
        directory(W.paths.pattern("data_folder", origin=SLICED_ORIGIN)),
    params:
        code=code("data/slices.py"),
        spec=lambda w: shlex.quote(json.dumps(W.paths.data_slice(w.folder))),
        src=data_root(W.S["data"]),
        out=data_root(),
    wildcard_constraints:
        folder="|".join(re.escape(f) for f in ["sts", "sick", *data_folders()]),
    message:
        f"slice {{wildcards.folder}} ({SLICED_ORIGIN})"
    log:
        W.paths.log("data_slice", origin=SLICED_ORIGIN),
    conda:
        "../envs/base.yaml"
    shell:
        "python -m sentaug.cli data-slice {wildcards.folder} --data {params.src} --out {params.out} "
        "--spec {params.spec} 2> {log}"


rule data_stats:
    """Statistics of the evaluation data, from the files (SDA Table 2, VaSCL Table 4)."""
    output:
        W.paths.pattern("data_stats"),
    input:
        data=lambda w: W.paths.data_stats_inputs(w.what, w.origin),
    params:
        code=code("data/stats.py"),
        root=lambda w: data_root(w.origin),
    wildcard_constraints:
        what="sts|clustering",
    message:
        "data statistics: {wildcards.what} ({wildcards.origin})"
    log:
        W.paths.log("data_stats"),
    conda:
        "../envs/base.yaml"
    shell:
        "python -m sentaug.cli data-stats {wildcards.what} --data {params.root} --out {output} 2> {log}"
