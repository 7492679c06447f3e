# Stage 2b: CARDS' retrieval index. The de-duplicated corpus (sentences under three words removed) is
# embedded once with the frozen pre-trained backbone; exact top-k neighbours are stored for training to draw
# hard negatives from. One .npz (+ provenance .json) per (corpus, backbone, pooler, k). The search runs on a
# GPU when the job has one (torch matmul), else with faiss on the CPU.


rule index:
    input:
        corpus=lambda w: corpus_file(w.corpus),
        backbone=lambda w: backbone_dir(w.backbone),
    output:
        index=W.paths.pattern("index"),
        meta=W.paths.pattern("index_meta"),
    params:
        code=code("index/neighbours.py"),
    wildcard_constraints:
        k=r"\d+",
        pooler="cls|cls_before_pooler|avg|avg_top2|avg_first_last|avg_emb_last",
    threads: WORKERS
    resources:
        **job_resources("index"),
    message:
        "retrieval index {wildcards.corpus} / {wildcards.backbone} / {wildcards.pooler} / k={wildcards.k}"
    log:
        W.paths.log("index"),
    conda:
        "../envs/train.yaml"
    # the thread count is the rule's, not the caller's environment's: faiss's search (OpenBLAS) splits its sums
    # by thread, and their rounding reorders near-tied neighbours
    shell:
        "OMP_NUM_THREADS={threads} python -m sentaug.cli index --corpus {input.corpus} --backbone {input.backbone} "
        "--pooler {wildcards.pooler} --k {wildcards.k} --out {output.index} 2> {log}"
