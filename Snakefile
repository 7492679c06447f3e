# sentaug: five augmentation-based contrastive sentence-embedding papers as one workflow.
# Every table and figure of every paper is a target:  snakemake results/tables/<paper>/<table>.tex --cores all
#                                                      snakemake results/figures/<paper>/<figure>.pdf
# Scale: --config scale=demo|small|test|paper|gpu (see config.yaml), results=DIR for another results folder (then every
# target above is under DIR: results=results/small, results/small/tables/...).  Cluster: --profile profiles/slurm
from snakemake.utils import min_version

min_version("8.0")

configfile: "config.yaml"

import sentaug.config as sc
from sentaug.choices import answered

with answered():    # a mistake in the configuration is answered in one line naming the key, before any job
    sc.validate(config)
if workflow.is_main_process:    # each hub model this scale loads unpinned, one line each (docs/data.md)
    sc.warn_unpinned(config)

include: "rules/common.smk"

# `snakemake --report results/report.html`: every table and figure, one category per paper (rules/report.smk);
# its front page with what was built and the bill when `make report` wrote one (rule report_front_page).
report: W.paths.report_front_page("report/workflow.rst")
include: "rules/download.smk"
include: "rules/augment.smk"
include: "rules/index.smk"
include: "rules/train.smk"
include: "rules/evaluate.smk"
include: "rules/report.smk"


rule all:
    input:
        all_tables(),
        W.all_figures(),
        W.leaderboard_outputs(),
        W.comparison_outputs(),
        list(W.report_pages().values()),
        W.paths.report_bill_pages(),
    default_target: not REPORTING    # `snakemake --report FILE` reports what is built (rule report_built)
    message:
        "every declared table and figure"


# The report of whatever is built (`make report`): the pages of the tables, figures and leaderboards whose files
# exist, and the front page when `sentaug cost all --front-page` wrote its data; what is not built yet is listed
# on the front page with the command that builds it. `snakemake report_built` writes the pages; `snakemake
# --report FILE report_built` (or plain `snakemake --report FILE`, whose default target this rule then is: a
# default target is the Snakefile's own, not an included file's) shows the pages already written, and never fails
# for a table or figure not built.
rule report_built:
    input:
        pages=lambda w: W.built_report_pages(existing_pages=REPORTING),
        front=[f for f in [W.paths.report_front_page_file(), *W.paths.report_bill_pages()]
               if W.paths.report_bill_pages() and (not REPORTING or os.path.isfile(f))],
    default_target: REPORTING
    localrule: True
    message:
        "the report's pages of what is built"


# --config results=DIR puts every output under DIR (scale=small results=results/small keeps two scales apart): a
# target asked for under results/ is answered with the path it moved to. The rule exists at every setting (every
# rule is declared in sentaug.workflow.jobs.RULES); without results= its pattern matches no path.
rule moved_target:
    input:
        lambda w: moved_target(R, w.path),
    output:
        "results/{path}",
    wildcard_constraints:
        path=moved_target_pattern(R),


# A paper's table or figure asked for without its paper's folder (results/tables/table3.tex) is answered with
# the papers' paths of that name, in one line, instead of Snakemake's MissingRuleException.
rule misplaced_target:
    input:
        lambda w: misplaced_target(R, w.kind, w.name, w.ext, PAPERS),
    output:
        f"{R}/{{kind}}/{{name}}.{{ext}}",
    wildcard_constraints:
        kind="tables|figures",
        name=misplaced_target_pattern([*W.leaderboards, "augmentations"]),
        ext="tex|csv|md|pdf|png",
