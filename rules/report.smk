# Stage 5: paper tables (and later figures), expanded from papers/<paper>.yaml.


rule table:
    input:
        paper="papers/{paper}.yaml",
        results=lambda w: [f for files in table_inputs(w.paper, w.table).values() for f in files],
        code=code("report"),
    output:
        tex=f"{R}/tables/{{paper}}/{{table}}.tex",
        csv=f"{R}/tables/{{paper}}/{{table}}.csv",
    params:
        inputs=lambda w: json.dumps({"rows": table_inputs(w.paper, w.table),
                                     "meta": {"stand_ins": S["backbones"], "corpus": CORPUS}}),
    log:
        f"{R}/logs/report/{{paper}}/{{table}}.log",
    conda:
        "../envs/base.yaml"
    shell:
        "{SENTAUG} report table --paper-file {input.paper} --table {wildcards.table} --inputs {params.inputs:q} "
        "--scale {SCALE} --out {output.tex} > {log} 2>&1"
