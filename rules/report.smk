# Stage 5: paper tables and figures, expanded from papers/<paper>.yaml.


rule table:
    input:
        paper="papers/{paper}.yaml",
        results=lambda w: table_files(w.paper, w.table),
    output:
        tex=W.paths.pattern("table", ext="tex"),
        csv=W.paths.pattern("table", ext="csv"),
    params:
        code=code("report/tables.py"),
        inputs=lambda w: json.dumps({"rows": table_inputs(w.paper, w.table), "meta": W.table_meta(w.paper, w.table)}),
        scale=SCALE,
    message:
        "table {wildcards.paper}/{wildcards.table}"
    log:
        W.paths.log("table"),
    conda:
        "../envs/base.yaml"
    shell:
        "python -m sentaug.cli report table --paper-file {input.paper} --table {wildcards.table} "
        "--inputs {params.inputs:q} --scale {params.scale} --out {output.tex} > {log} 2>&1"


rule figure:
    input:
        paper="papers/{paper}.yaml",
        results=lambda w: figure_targets(w.paper, w.figure),
    output:
        pdf=W.paths.pattern("figure", ext="pdf"),
        png=W.paths.pattern("figure", ext="png"),
        csv=W.paths.pattern("figure", ext="csv"),
    params:
        code=code("report/figures.py"),
        inputs=lambda w: json.dumps({"panels": W.figure_points(w.paper, w.figure),
                                     "meta": W.figure_meta(w.paper, w.figure)}),
        scale=SCALE,
    message:
        "figure {wildcards.paper}/{wildcards.figure}"
    log:
        W.paths.log("figure"),
    conda:
        "../envs/base.yaml"
    shell:
        "python -m sentaug.cli report figure --paper-file {input.paper} --figure {wildcards.figure} "
        "--inputs {params.inputs:q} --scale {params.scale} --out {output.pdf} > {log} 2>&1"


# Augmentation census (census_rows in common.smk): every declared augmentation on the scale's corpus (first
# seed), with the cosine between original and augmented under the scale's bert-base-uncased stand-in.
rule augment_cosine:
    input:
        cache=lambda w: cache_file(w.augmentation, w.seed, w.corpus),
        model=lambda w: backbone_dir(w.backbone),
    output:
        W.paths.pattern("census_embedding"),
    params:
        code=code("report/census.py"),
        max_lines=2000,
    threads: EVAL_THREADS
    message:
        "census cosine: {wildcards.augmentation}, seed {wildcards.seed} ({wildcards.backbone})"
    log:
        W.paths.log("census_embedding"),
    conda:
        "../envs/train.yaml"
    shell:
        "OMP_NUM_THREADS={threads} python -m sentaug.cli augment-cosine --cache {input.cache} "
        "--model {input.model} --max-lines {params.max_lines} --out {output} 2> {log}"


# Agreement of every augmentation with the code its paper ran, on the stored reference cases (NL-Augmenter's
# test.json, SDA's released code, CARDS's collator): one JSON the census reads. CARDS's cases read the RoBERTa
# tokenizer through the model mirror ($SENTAUG_MODEL_MIRROR); without it they are recorded as failing.
rule conformance:
    output:
        CONFORMANCE,
    params:
        code=code("augment"),
        model=config["spacy_model"],
    log:
        W.paths.log("conformance"),
    conda:
        "../envs/augment.yaml"
    shell:
        "python -m sentaug.cli conformance --spacy-model {params.model} --out {output} > {log} 2>&1"


rule census:
    input:
        files=[f for row in census_rows().values() for f in row.values()],
        conformance=CONFORMANCE,
    output:
        tex=W.paths.pattern("census", ext="tex"),
        csv=W.paths.pattern("census", ext="csv"),
    params:
        code=code("report/census.py"),
        inputs=lambda w: json.dumps({"rows": census_rows(), "conformance": CONFORMANCE,
                                     "meta": {"corpus": CORPUS, "seed": SEEDS[0], "backbone": CENSUS_BACKBONE,
                                              "compares_with_papers": W.S["compares_with_papers"]}}),
        scale=SCALE,
    message:
        "table augmentations (census)"
    log:
        W.paths.log("census"),
    conda:
        "../envs/base.yaml"
    shell:
        "python -m sentaug.cli report census --inputs {params.inputs:q} --scale {params.scale} --out {output.tex} "
        "> {log} 2>&1"


rule tokenization_effects:
    input:
        corpus=lambda w: corpus_file(w.corpus),
        tokenizer=lambda w: backbone_dir(w.backbone),
    output:
        W.paths.pattern("tokenization_effects"),
    params:
        code=code("augment/tokenization_effects.py"),
    message:
        "tokenization effects of switch-case ({wildcards.backbone})"
    log:
        W.paths.log("tokenization_effects"),
    conda:
        "../envs/augment.yaml"
    shell:
        "python -m sentaug.cli tokenization-effects --corpus {input.corpus} --tokenizer {input.tokenizer} "
        "--out {output} 2> {log}"


# Tables that are configuration (AugCSE Tables 3, 10, 11, 13): a run's resolved spec, and its parameter counts
# from the modules the trainer builds, written without training.
rule describe_spec:
    output:
        W.paths.pattern("describe", what="spec"),
    params:
        code=code("report/describe.py", "objectives"),     # the parts registry imports the objectives by name
        spec=lambda w: json.dumps(W.specs.run_spec(w.paper, w.backbone, w.method, SEEDS[0])),
    log:
        W.paths.log("describe", what="spec"),
    conda:
        "../envs/base.yaml"
    shell:
        "python -m sentaug.cli describe spec --spec {params.spec:q} --paper {wildcards.paper} --out {output} 2> {log}"


rule describe_model_size:
    input:
        backbone=lambda w: backbone_dir(w.backbone),
    output:
        W.paths.pattern("describe", what="model_size"),
    params:
        code=code("report/describe.py", "objectives"),     # the parts registry imports the objectives by name
        spec=lambda w: json.dumps(W.specs.run_spec(w.paper, w.backbone, w.method, SEEDS[0])),
    log:
        W.paths.log("describe", what="model_size"),
    conda:
        "../envs/train.yaml"
    shell:
        "python -m sentaug.cli describe model-size --spec {params.spec:q} --backbone {input.backbone} "
        "--out {output} > {log} 2>&1"


# The leaderboards (papers/leaderboard.yaml): every method on the same backbone, corpus, steps and its own seeds;
# one board per declared backbone (`leaderboard` for the first, `leaderboard-<backbone>` for the others).
if W.leaderboards:

    rule leaderboard:
        input:
            spec=LEADERBOARD_SPEC,
            results=lambda w: W.leaderboard_targets(_board_backbone(w)),
        output:
            tex=W.paths.pattern("board_table", ext="tex"),
            csv=W.paths.pattern("board_table", ext="csv"),
            md=W.paths.pattern("board_table", ext="md"),
            pdf=W.paths.pattern("board_figure", ext="pdf"),
            png=W.paths.pattern("board_figure", ext="png"),
        wildcard_constraints:
            board=BOARDS,
        params:
            code=code("report/leaderboard.py"),
            inputs=lambda w: json.dumps(
                {"rows": W.leaderboard_points(_board_backbone(w)), "meta": W.leaderboard_meta(_board_backbone(w))}
            ),
            scale=SCALE,
        log:
            W.paths.log("board_table"),
        conda:
            "../envs/base.yaml"
        shell:
            "python -m sentaug.cli report leaderboard --spec {input.spec} --board {wildcards.board} "
            "--inputs {params.inputs:q} --scale {params.scale} --out {output.tex} --figure {output.pdf} > {log} 2>&1"


# Comparisons (config key comparisons, sentaug.report.compare): the configuration's methods beside SimCSE and the
# papers' main methods, computed as the leaderboard's cells, on the leaderboard's runs.
if W.comparisons:

    rule compare:
        input:
            results=lambda w: W.board_targets(W.comparison_points(w.name)),
        output:
            tex=W.paths.pattern("comparison", ext="tex"),
            csv=W.paths.pattern("comparison", ext="csv"),
            md=W.paths.pattern("comparison", ext="md"),
        wildcard_constraints:
            name=COMPARISONS,
        params:
            code=code("report/compare.py"),
            inputs=lambda w: json.dumps({"spec": W.comparisons[w.name], "rows": W.comparison_points(w.name),
                                         "meta": W.comparison_meta(w.name)}),
            scale=SCALE,
        log:
            W.paths.log("comparison"),
        conda:
            "../envs/base.yaml"
        shell:
            "python -m sentaug.cli report compare --name {wildcards.name} --inputs {params.inputs:q} "
            "--scale {params.scale} --out {output.tex} > {log} 2>&1"


# Report pages: one self-contained HTML page per table and figure (the output, its caption, its numbers, its
# provenance), marked for `snakemake --report results/report.html`, one category per paper (helpers in
# common.smk).
rule report_table:
    input:
        paper="papers/{paper}.yaml",
        csv=W.paths.pattern("table", ext="csv"),
        results=lambda w: table_files(w.paper, w.table),
    output:
        report(W.paths.pattern("table_page"), caption="../report/page.rst",
               category=lambda w: _short(w.paper), subcategory="Tables",
               labels=lambda w: {"output": w.table, "kind": "table", "scale": SCALE}),
    params:
        code=code("report/pages.py"),
        caption=lambda w: rst_escape(page_caption("table", W.papers[w.paper], w.table, SCALE,
                                                  W.table_meta(w.paper, w.table))),
        inputs=lambda w, input: json.dumps({"results": list(input.results),
                                            "meta": _page_meta(_short(w.paper), W.table_meta(w.paper, w.table))}),
        scale=SCALE,
    log:
        W.paths.log("table_page"),
    conda:
        "../envs/base.yaml"
    shell:
        "python -m sentaug.cli report page --kind table --name {wildcards.table} --spec {input.paper} "
        "--csv {input.csv} --inputs {params.inputs:q} --scale {params.scale} --out {output} > {log} 2>&1"


rule report_figure:
    input:
        paper="papers/{paper}.yaml",
        png=W.paths.pattern("figure", ext="png"),
        csv=W.paths.pattern("figure", ext="csv"),
        results=lambda w: figure_targets(w.paper, w.figure),
    output:
        report(W.paths.pattern("figure_page"), caption="../report/page.rst",
               category=lambda w: _short(w.paper), subcategory="Figures",
               labels=lambda w: {"output": w.figure, "kind": "figure", "scale": SCALE}),
    params:
        code=code("report/pages.py"),
        caption=lambda w: rst_escape(page_caption("figure", W.papers[w.paper], w.figure, SCALE,
                                                  W.figure_meta(w.paper, w.figure))),
        inputs=lambda w, input: json.dumps({"results": list(input.results),
                                            "meta": _page_meta(_short(w.paper), W.figure_meta(w.paper, w.figure))}),
        scale=SCALE,
    log:
        W.paths.log("figure_page"),
    conda:
        "../envs/base.yaml"
    shell:
        "python -m sentaug.cli report page --kind figure --name {wildcards.figure} --spec {input.paper} "
        "--csv {input.csv} --png {input.png} --inputs {params.inputs:q} --scale {params.scale} --out {output} "
        "> {log} 2>&1"


# The report's front page and the bill's own page, from the data `sentaug cost all --front-page` writes (run by
# `make report` before this rule): that command resolves the DAG, so it cannot be a job of it.
rule report_front_page:
    input:
        W.paths.report_bill_data_file(),
    output:
        front=W.paths.report_front_page_file(),
        bill=report(W.paths.report_bill_page(), caption="../report/page.rst", category="Bill",
                    labels={"output": "bill", "kind": "table", "scale": SCALE}),
    params:
        code=code("report/front_page.py"),
        caption="Device-hours per backbone and method: projected for the paper scale, and what this build took.",
        flags=build_flags(workflow),     # the front page's commands build what is missing at these settings
    localrule: True
    message:
        "the report's front page and the bill"
    log:
        W.paths.log("front_page"),
    conda:
        "../envs/base.yaml"
    shell:
        "python -m sentaug.cli report front-page --data {input} --out {output.front} --page {output.bill} "
        "--build-flags={params.flags:q} > {log} 2>&1"



rule report_census:
    input:
        csv=W.paths.path("census", ext="csv"),
        results=[row["stats"] for row in census_rows().values()],
    output:
        report(W.paths.path("census_page"), caption="../report/page.rst", category="Augmentations",
               subcategory="Tables", labels={"output": "census", "kind": "table", "scale": SCALE}),
    params:
        code=code("report/pages.py"),
        caption=rst_escape(page_caption("census", None, "census", SCALE,
                                        {"corpus": CORPUS, "backbone": CENSUS_BACKBONE})),
        inputs=lambda w, input: json.dumps({"results": list(input.results),
                                            "meta": {**_page_meta("Census", W.scale_meta()),
                                                     "backbone": CENSUS_BACKBONE}}),
        scale=SCALE,
    log:
        W.paths.log("census_page"),
    conda:
        "../envs/base.yaml"
    shell:
        "python -m sentaug.cli report page --kind census --name augmentations --csv {input.csv} "
        "--inputs {params.inputs:q} --scale {params.scale} --out {output} > {log} 2>&1"


if W.leaderboards:

    rule report_leaderboard:
        input:
            spec=LEADERBOARD_SPEC,
            csv=W.paths.pattern("board_table", ext="csv"),
            png=W.paths.pattern("board_figure", ext="png"),
            results=lambda w: W.leaderboard_targets(_board_backbone(w)),
        output:
            report(W.paths.pattern("board_page"), caption="../report/page.rst", category="Leaderboard",
                   subcategory="Tables", labels=lambda w: {"output": w.board, "kind": "table", "scale": SCALE}),
        wildcard_constraints:
            board=BOARDS,
        params:
            code=code("report/pages.py"),
            caption=lambda w: rst_escape(page_caption("leaderboard", W.leaderboard, w.board, SCALE, _board_meta(w))),
            inputs=lambda w, input: json.dumps({"results": list(input.results), "meta": _board_meta(w)}),
            scale=SCALE,
        log:
            W.paths.log("board_page"),
        conda:
            "../envs/base.yaml"
        shell:
            "python -m sentaug.cli report page --kind leaderboard --name {wildcards.board} --spec {input.spec} "
            "--csv {input.csv} --png {input.png} --inputs {params.inputs:q} --scale {params.scale} --out {output} "
            "> {log} 2>&1"
