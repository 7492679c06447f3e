"""The built-in evaluation suites, one registered class each (`sentaug.evaluate.suites`): what each reads, its flags,
its workload, and how `sentaug evaluate <suite>` and `evaluate(model, [suite])` run it. Their scoring code lives in
their own modules (`module`), imported only when a suite runs: the Snakefile and `sentaug evaluate --help` read
these declarations without numpy or torch. The order here is that of `sentaug evaluate`'s commands."""
from __future__ import annotations

from .suites import Flag, Suite, register, shared


@register("sts")
class STS(Suite):
    help = "STS12-16 ('all' setting), STS-B and SICK-R, SimCSE's SentEval protocol"
    folders = ("sts", "sick")          # STS12-16, STS-B and SICK-R by SimCSE's SentEval protocol
    data_help = "sts/, sick/"
    module = "sentaug.evaluate.sts"
    tasks = False
    flags = (Flag("--lowercase", action="store_true",
                  help="lower-case every sentence first (CARDS Table 4: upper case ignored in evaluation)"),)
    workload = {"n": 26973, "basis": "measured"}

    def run(self, a):
        from .sts import evaluate_sts_cli

        evaluate_sts_cli(**shared(a), batch_size=a.batch_size, lowercase=a.lowercase, normalize=a.normalize)

    def sentences(self, data, lowercase: bool = False):
        from .sts import _all_sentences, load_suite, lowercase_suite, n_pairs, score_suite

        suite = load_suite(data)
        if lowercase:
            suite = lowercase_suite(suite)
        return _all_sentences(suite), lambda vectors: {**score_suite(suite, vectors), "n_pairs": n_pairs(suite)}


@register("cnsd")
class CNSD(Suite):
    help = "Chinese STS-B (CNSD) test and dev, Spearman x100 of cosine (SDA Table 5)"
    folders = ("cnsd",)
    data_help = "cnsd/cnsd-sts-{dev,test}.txt"
    module = "sentaug.evaluate.cnsd"
    workload = {"n": 5638, "basis": "estimated"}        # CNSD dev + test pairs x 2

    def run(self, a):
        from .cnsd import evaluate_cnsd_cli

        evaluate_cnsd_cli(**shared(a), batch_size=a.batch_size, normalize=a.normalize)

    def sentences(self, data):
        from ..data.cnsd import read_cnsd_split
        from .cnsd import SPLITS, score_cnsd

        splits = {s: read_cnsd_split(data, s) for s in SPLITS}
        sentences = [x for p in splits.values() for x in (*p.s1, *p.s2)]
        return sentences, lambda vectors: score_cnsd(splits, vectors)


@register("transfer")
class Transfer(Suite):
    help = "SentEval transfer: MR CR SUBJ MPQA SST2 TREC MRPC (logistic regression)"
    folders = ("transfer",)
    data_help = "transfer/"
    module = "sentaug.evaluate.transfer"
    flags = (Flag("--mode", choices=["fast", "test"], default="fast", help="k = 5 (fast) or 10 (test) folds"),
             Flag("--solver", choices=["senteval", "lbfgs"], default="senteval",
                  help="SentEval's early-stopped classifier (default) or the same objective solved by L-BFGS"))
    workload = {"n": 108107, "basis": "measured"}

    def run(self, a):
        from .transfer import evaluate_transfer_cli

        evaluate_transfer_cli(**shared(a), mode=a.mode, tasks=a.tasks, solver=a.solver, batch_size=a.batch_size,
                              normalize=a.normalize)

    def sentences(self, data, tasks=None, **score_options):
        from ..data.transfer import TASKS, load_transfer
        from .transfer import all_sentences, score_transfer

        loaded = load_transfer(data, tuple(tasks) if tasks else TASKS)
        return all_sentences(loaded), lambda vectors: score_transfer(loaded, vectors, **score_options)


@register("clustering")
class Clustering(Suite):
    help = "short-text clustering: K-means over seeds, Hungarian accuracy/NMI/ARI"
    folders = ("clustering",)
    data_help = "clustering/"
    module = "sentaug.evaluate.clustering"
    flags = (Flag("--seeds", type=int, default=10, help="K-means runs (seeds 0..N-1)"),
             Flag("--n-init", type=int, default=1, help="k-means++ restarts per run"))
    workload = {"n": 95203, "basis": "measured"}

    def run(self, a):
        from .clustering import evaluate_clustering_cli

        evaluate_clustering_cli(**shared(a), datasets=a.tasks,
                                seeds=tuple(range(a.seeds)), n_init=a.n_init, batch_size=a.batch_size,
                                normalize=a.normalize)

    def sentences(self, data, tasks=None, **score_options):
        from ..data.clustering import DATASETS, load_clustering
        from .clustering import score_clustering

        loaded = load_clustering(data, tuple(tasks) if tasks else tuple(DATASETS))
        texts = [t for d in loaded.values() for t in d.texts]
        return texts, lambda vectors: score_clustering(loaded, vectors, **score_options)


@register("intent")
class Intent(Suite):
    help = "few-shot intent classification (K = 5/10/20, 5 fixed splits)"
    folders = ("intent",)
    data_help = "intent/"
    module = "sentaug.evaluate.intent"
    flags = (Flag("--iterations", type=int, default=1000,
                  help="linear-layer iterations per split (VaSCL: 1000; fewer only for demo runs)"),)
    workload = {"n": 65948, "basis": "measured"}

    def run(self, a):
        from .intent import evaluate_intent_cli

        evaluate_intent_cli(**shared(a), datasets=a.tasks, batch_size=a.batch_size, iterations=a.iterations,
                            normalize=a.normalize)

    def sentences(self, data, tasks=None, iterations: int | None = None, **score_options):
        from ..data.intent import DATASETS, load_intent
        from .intent import TRAIN, score_intent

        loaded = load_intent(data, tuple(tasks) if tasks else tuple(DATASETS))
        texts = [t for d in loaded.values() for t in (*d.pool.texts, *d.test.texts)]
        train = {**TRAIN, "iterations": iterations or TRAIN["iterations"]}
        return texts, lambda vectors: score_intent(loaded, vectors, train=train, **score_options)


@register("glue")
class GLUE(Suite):
    help = "GLUE fine-tuning (CLEAR Table 1 / CARDS Table 6), optional R-drop + switch-case"
    folders = ("glue",)                 # one folder per task fine-tuned on: glue/<TASK>
    data_help = "glue/<TASK>/train.tsv, dev.tsv"
    module = "sentaug.evaluate.glue"
    flags = (
        Flag("--max-steps", type=int, default=None, help="optimiser steps per task (overrides --epochs)"),
        Flag("--epochs", type=float, default=3.0, help="fine-tuning epochs per task (default: 3)"),
        Flag("--lr", type=float, default=2e-5, help="fine-tuning learning rate (default: 2e-5)"),
        Flag("--train-batch-size", type=int, default=32, help="fine-tuning batch size (default: 32)"),
        Flag("--max-seq-length", type=int, default=128, help="token limit (default: 128)"),
        Flag("--rdrop", type=float, default=0.0, metavar="ALPHA", help="weight of R-drop's symmetric KL"),
        Flag("--switch-case", type=float, default=0.0, metavar="P",
             help="switch-case probability on the second R-drop pass (CARDS Table 6)"),
        Flag("--train-on-dev", action="store_true",
             help="smoke test only: fine-tune on the dev split when a task has no train.tsv"),
        Flag("--seed", type=int, default=42, help="fine-tuning seed (default: 42)"),
        Flag("--recipe", metavar="JSON", help="a paper's fine-tuning recipe, inline JSON or a file: {\"all\": "
                                              "{setting: value}, \"tasks\": {TASK: {setting: value}}} over "
                                              "the flags above (config.yaml glue.recipes)"),
        Flag("--batching", choices=["auto", "order", "buckets"], default="auto",
             help="each epoch's batches: slices of its shuffled order, or length buckets padded to a few "
                  "widths (auto: buckets on a GPU, order on the CPU)"),
        Flag("--step", choices=["auto", "graph", "eager"], default="auto",
             help="auto: one CUDA graph per batch shape on a GPU, eager steps on the CPU"))

    def run(self, a):
        from .cli import task_list
        from .glue import evaluate_glue_cli

        evaluate_glue_cli(**shared(a), tasks=task_list(a.tasks),
                          max_steps=a.max_steps, rdrop=a.rdrop, switch_case_p=a.switch_case,
                          train_on_dev=a.train_on_dev, seed=a.seed, learning_rate=a.lr, batch_size=a.train_batch_size,
                          epochs=a.epochs, max_seq_length=a.max_seq_length, eval_batch_size=a.batch_size,
                          batching=a.batching, step=a.step,
                          recipe=_recipe(a.recipe))

    def fetch_folders(self, tasks) -> list[str]:
        """Only the tasks asked for: MNLI and QQP alone are hundreds of MB."""
        from .cli import task_list

        return [f"glue/{t}" for t in task_list(tasks)] if tasks else list(self.folders)

    def workflow_folders(self, evaluations) -> list[str]:
        return [f"glue/{t}" for t in evaluations.glue_tasks]

    def workflow_flags(self, evaluations) -> list[str]:
        return [f"--tasks {' '.join(evaluations.glue_tasks)}"]


def _recipe(value: str | None) -> dict | None:
    """`--recipe`: inline JSON or a JSON file (as `--spec`)."""
    if not value:
        return None
    import json
    from pathlib import Path

    return json.loads(Path(value).read_text(encoding="utf-8") if not value.lstrip().startswith("{") else value)


@register("analysis")
class Analysis(Suite):
    help = "alignment/uniformity, StackOverflow neighbourhoods, augmentation cosine, COND-HM/SVG/GH, perplexity " \
           "difference"
    folders = ("sts", "clustering", "nli/snli_senteval")
    data_help = "sts/STSBenchmark, clustering/stackoverflow.csv, nli/snli_senteval"
    module = "sentaug.evaluate.analysis"
    flags = (
        Flag("--augmentations", nargs="+", metavar="FILE.parquet",
             help="augmentation caches (columns original, augmented, changed)"),
        Flag("--k", type=int, nargs="+", default=[1, 5, 10, 20, 50, 100], help="top-K for neighbourhoods"),
        Flag("--stackoverflow-limit", type=int, default=None, help="subsample StackOverflow (default: all)"),
        Flag("--iso-sample", type=int, default=5000, help="changed rows used per augmentation"),
        Flag("--gh-sample", type=int, default=500,
             help="rows per sample for the GH (bottleneck) distance (0: skip it)"),
        Flag("--nli-limit", type=int, default=None, help="premises used for the NLI distances (default: all)"),
        Flag("--lm", default="gpt2", help="causal LM for perplexity: a folder or a hub id, pinned as "
             "ID@COMMIT if you like; 'none' to skip"),
        Flag("--seed", type=int, default=0, help="sampling seed (default: 0)"))
    workload = {"n": 62241, "basis": "estimated"}       # STS-B dev + StackOverflow + SNLI dev/test pairs x 2

    def run(self, a):
        from .analysis import evaluate_analysis_cli
        from .cli import task_list

        evaluate_analysis_cli(**shared(a), parts=task_list(a.tasks),
                              augmentations=a.augmentations or (), ks=tuple(a.k),
                              stackoverflow_limit=a.stackoverflow_limit, iso_sample=a.iso_sample,
                              gh_sample=a.gh_sample, lm=None if a.lm == "none" else a.lm, seed=a.seed,
                              batch_size=a.batch_size, nli_limit=a.nli_limit)


@register("nli")
class NLI(Suite):
    help = "ANLI entailment-vs-contradiction score and A/E/C isomorphism of NLI triplet sets (AugCSE Tables 1 and " \
           "15)"
    folders = ("nli/anli",)             # and the folders of the triplet sets its isomorphism part reads (--set)
    data_help = "nli/anli, nli/snli_senteval, nli/simcse"
    module = "sentaug.evaluate.nli"
    flags = (Flag("--anli-splits", nargs="+", default=["dev", "test"],
                  help="ANLI splits scored (dev, test, train, or R1/dev, ...)"),
             Flag("--iso-sample", type=int, default=5000, help="triplets used per set for the isomorphism"),
             Flag("--gh-sample", type=int, default=500, help="rows per sample for the GH (bottleneck) distance"),
             Flag("--seed", type=int, default=0, help="sampling seed (default: 0)"))
    workload = {"n": 20000, "basis": "estimated"}       # ANLI dev + test pairs x 2 and the sampled triplet sets

    def add_arguments(self, parser) -> None:
        from ..cli_args import hidden_alias

        hidden_alias(parser.add_argument("--triplets", "--set", dest="triplets", action="append", metavar="NAME=SET",
                                         help="a triplet set for the isomorphism part, e.g. nli=snli (repeatable)"),
                     "--set")
        super().add_arguments(parser)

    def extra_folders(self, a) -> list[str]:
        """The folders of its triplet sets (an unknown one is named by evaluate_nli_cli)."""
        from ..data.triplets import SETS

        return [SETS[name][0] for name in self._sets(a).values() if name in SETS]

    @staticmethod
    def _sets(a) -> dict:
        return dict(item.split("=", 1) for item in a.triplets or [])

    def run(self, a):
        from .nli import evaluate_nli_cli

        evaluate_nli_cli(**shared(a), sets=self._sets(a),
                         anli_splits=tuple(a.anli_splits), iso_sample=a.iso_sample, gh_sample=a.gh_sample,
                         seed=a.seed, batch_size=a.batch_size, normalize=a.normalize)

    def workflow_folders(self, evaluations) -> list[str]:
        """The isomorphism part reads the scale's triplet sets (AugCSE Table 15)."""
        return [*self.folders, *(evaluations.paths.nli_set_folder(name) for name in evaluations.S.get("nli_sets", {})
                                 .values())]

    def workflow_flags(self, evaluations) -> list[str]:
        """AugCSE Table 15: the scale's NLI triplet sets (nli: SNLI + MNLI, anli: ANLI)."""
        return [f"--set {k}={v}" for k, v in evaluations.S.get("nli_sets", {}).items()]


@register("cola")
class CoLA(Suite):
    help = "CoLA probe: logistic regression on frozen embeddings, dev accuracy (AugCSE Table 1)"
    folders = ("glue/CoLA",)
    data_help = "glue/CoLA/train.tsv, dev.tsv"
    module = "sentaug.evaluate.cola"
    flags = (Flag("--C", type=float, default=1.0, help="inverse L2 strength (scikit-learn's C)"),
             Flag("--max-iter", type=int, default=1000, help="solver iterations (default: 1000)"))
    workload = {"n": 9594, "basis": "measured"}         # CoLA train + dev

    def run(self, a):
        from .cola import evaluate_cola_cli

        evaluate_cola_cli(**shared(a), C=a.C, max_iter=a.max_iter, batch_size=a.batch_size, normalize=a.normalize)

    def sentences(self, data, **score_options):
        from .cola import load_cola, score_cola

        train, dev = load_cola(data)
        return train.text_a + dev.text_a, lambda vectors: score_cola(train, dev, vectors, **score_options)
