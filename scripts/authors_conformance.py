"""Reference figures of the authors' released training code, for tests/train/test_authors_conformance.py.

Each case loads one tiny model (2 layers, hidden 64; weights from `tests/train/authors_code/common.py`, by name)
into the authors' own classes, runs their training step on a fixed batch (fp32, one thread) and writes its loss,
a fingerprint of every parameter's gradient, and what the step drew (retrieved negatives, masks, the probe's
start); the draw cases record the distribution of the authors' host-side random draws. The authors' code is
never copied into this repository: it is run from their checkouts, found under AUTHORS, and patched at import
only (`PATCHES`, written into every fixture).

Setting up AUTHORS (once; this project's environment runs the script, the authors' environment their code):

    fetch each repository of `REPOS` at its commit into AUTHORS/<owner>+<name> (git archive; files of 4 MiB and
    more are not needed)
    python3.11 -m venv AUTHORS/venv
    AUTHORS/venv/bin/pip install torch==2.13.0 'numpy<2' 'setuptools<70' huggingface_hub==0.10.1 filelock regex \\
        requests tqdm packaging pyyaml sacremoses six tensorboardX scikit-learn scipy tokenizers==0.13.3 \\
        faiss-cpu==1.7.4
    for v in 4.2.1 4.8.1 4.11.3 4.22.2; do
        AUTHORS/venv/bin/pip install --no-deps --target AUTHORS/site-tf$v transformers==$v; done

Then, from the repository root:

    PYTHONPATH=src .venv/bin/python scripts/authors_conformance.py AUTHORS [--case NAME ...]

which writes tests/train/authors_code/fixtures/<case>.json (the batch is tokenized here, with the model mirror's
tokenizers: $SENTAUG_MODEL_MIRROR or ../shared/models).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HERE = ROOT / "tests" / "train" / "authors_code"
FIXTURES = HERE / "fixtures"

# repository -> (commit, the transformers version it runs under: its pin, or the closest that imports here)
REPOS = {
    "princeton-nlp/SimCSE": ("49fa580a853752ede55b8c76d9debf748e214d3f", "4.2.1"),
    "alibaba/SimCSE-with-CARDS": ("8e038a0ebd574b68deed4892ccadc8378b33cd37", "4.11.3"),
    "amazon-research/sentence-representations": ("93aae2e12cf7178365870c3507b677b4830e8111", "4.8.1"),
    "PootieT/AugCSE": ("2ed4927a4a81422c1a03d83dc23bca221eb06b47", "4.22.2"),
}
# case -> (repository, the files of theirs it runs, tokenizer folder in the model mirror)
CASES = {
    "simcse_unsup": ("princeton-nlp/SimCSE", ["simcse/models.py"], "bert-base-uncased-tokenizer"),
    "simcse_unsup_dropout": ("princeton-nlp/SimCSE", ["simcse/models.py"], "bert-base-uncased-tokenizer"),
    "simcse_sup": ("princeton-nlp/SimCSE", ["simcse/models.py"], "bert-base-uncased-tokenizer"),
    "simcse_mlm": ("princeton-nlp/SimCSE", ["simcse/models.py", "train.py"], "bert-base-uncased-tokenizer"),
    "cards": ("alibaba/SimCSE-with-CARDS", ["models/bert/modeling_simcse.py", "models/bert/modeling_roberta.py",
                                            "data/data_collator.py"], "roberta-base-tokenizer"),
    "vascl_official_code": ("amazon-research/sentence-representations",
                            ["VaSCL/models/Transformers.py", "VaSCL/training.py", "VaSCL/learners/vat_utils.py",
                             "VaSCL/learners/contrastive_utils.py"], "bert-base-uncased-tokenizer"),
    "vascl_official_code_dropout": ("amazon-research/sentence-representations",
                                    ["VaSCL/models/Transformers.py", "VaSCL/training.py", "VaSCL/learners/vat_utils.py",
                                     "VaSCL/learners/contrastive_utils.py"],
                                    "bert-base-uncased-tokenizer"),
    "augcse_official_code": ("PootieT/AugCSE", ["training/model.py", "training/mlp.py", "training/discriminator.py",
                                                "training/train_text_classification.py"],
                             "bert-base-uncased-tokenizer"),
    "augcse_official_code_dropout": ("PootieT/AugCSE", ["training/model.py", "training/mlp.py",
                                                        "training/discriminator.py",
                                                        "training/train_text_classification.py"],
                                     "bert-base-uncased-tokenizer"),
    "draws_mlm": ("princeton-nlp/SimCSE", ["train.py"], "bert-base-uncased-tokenizer"),
    "draws_cards": ("alibaba/SimCSE-with-CARDS", ["models/bert/modeling_simcse.py"], "roberta-base-tokenizer"),
    "draws_vascl": ("amazon-research/sentence-representations", ["VaSCL/learners/vat_utils.py"],
                    "bert-base-uncased-tokenizer"),
}
# What the cases change in the authors' environment before importing their code (their code itself unchanged).
PATCHES = {
    "all": ["transformers' import-time dependency version check disabled (sys.modules['transformers."
            "dependency_versions_check'] = a stub): the old transformers pins tokenizers versions with no wheel for "
            "Python 3.11; no tokenizer of transformers is used, ids come from the fixture",
            "torch.set_num_threads(1); torch.use_deterministic_algorithms(True)"],
    "simcse_mlm": ["OurDataCollatorWithPadding.mask_tokens is taken out of train.py's main() by its syntax tree and "
                   "run as written (main() needs the data files), with a tokenizer stand-in answering as "
                   "BertTokenizerFast (train.py's default) does: every special id, [PAD] included, is special",
                   "train.py's two lines that load BertForPreTraining's cls.predictions into lm_head are run as the "
                   "script runs them, after BertForCL.from_pretrained of a saved tiny BertForPreTraining"],
    "draws_mlm": ["as simcse_mlm: mask_tokens taken out of train.py's main() by its syntax tree"],
    "cards": ["faiss.StandardGpuResources and faiss.knn_gpu (GPU only) replaced by CPU stand-ins: an exact inner-"
              "product top-k with torch (faiss-cpu has no GPU resources)",
              "modules of theirs that log (utils.callbacks) import as they are; the buffer dataset is a list of "
              "the corpus's token ids"],
    "draws_cards": ["as cards: faiss GPU calls replaced by an exact CPU top-k"],
    "vascl_official_code": ["sys.modules['senteval'] stubbed (training.py imports SentEval for evaluation only)",
                            "torch.nn.Module.cuda made the identity (VaSCL_Trainer moves its losses to CUDA)",
                            "the optimizer is a stand-in that reads the gradients at step() and whose zero_grad() "
                            "does nothing"],
    "augcse_official_code": ["modules imported by training/train_text_classification.py for data, logging and "
                             "evaluation only are stubbed: wandb, datasets, evaluation.*, testing_part.*, "
                             "transformations.*, senteval, training.generate_text_classification",
                             "ContrastiveTrainer.compute_loss_one_aug is called on an instance made without "
                             "Trainer.__init__ (model_args as experiments/run_train_exp.py sets them)"],
}
PATCHES["simcse_unsup"] = PATCHES["simcse_unsup_dropout"] = PATCHES["simcse_sup"] = []
PATCHES["vascl_official_code_dropout"] = PATCHES["vascl_official_code"]
PATCHES["augcse_official_code_dropout"] = PATCHES["augcse_official_code"]
PATCHES["draws_vascl"] = []

BATCH_SEED = 1234
DRAWS = 20_000


# ------------------------------------------------------------------------------------------------ our side
def mirror() -> Path:
    return Path(os.environ.get("SENTAUG_MODEL_MIRROR") or ROOT.parent / "shared" / "models")


def token_ids(tokenizer_dir: str, texts: list[str]) -> list[list[int]]:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tokenizer_dir)
    return [tok(t, truncation=True, max_length=32)["input_ids"] for t in texts]


def case_inputs(case: str) -> dict:
    """The texts and ids a case feeds the authors' code (ours tokenizes the same texts in the test)."""
    sys.path.insert(0, str(HERE))
    import common
    from transformers import AutoTokenizer

    tok_dir = str(mirror() / CASES[case][2])
    tok = AutoTokenizer.from_pretrained(tok_dir)
    texts = {k: v for k, v in common.case_texts(case).items()}
    ids = {k: token_ids(tok_dir, v) for k, v in texts.items()}
    labels, _ = common.augcse_labels()
    return {"case": case, "texts": texts, "ids": ids, "tokenizer": CASES[case][2], "tokenizer_dir": tok_dir,
            "vocab_size": len(tok), "pad": tok.pad_token_id, "mask": tok.mask_token_id,
            "special": sorted(set(tok.all_special_ids)), **common.SETTINGS, "lines": list(range(len(texts["anchors"]))),
            "aug_types": labels}


def run_case(case: str, authors: Path, out: Path) -> None:
    repo, _, _ = CASES[case]
    commit, version = REPOS[repo]
    checkout = authors / repo.replace("/", "+")
    inputs = case_inputs(case)
    tmp = out / f".{case}.inputs.json"
    tmp.write_text(json.dumps(inputs))
    code_dir = checkout / "VaSCL" if repo.endswith("sentence-representations") else checkout
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(authors / f"site-tf{version}"), str(code_dir),
                                                        str(HERE)]),
           "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}
    python = authors / "venv" / "bin" / "python"
    subprocess.run([str(python), str(Path(__file__).resolve()), "--inside", case, str(tmp), str(out / f"{case}.json")],
                   env=env, check=True, cwd=str(code_dir))
    tmp.unlink()
    fixture = json.loads((out / f"{case}.json").read_text())
    fixture["batch"] = {"texts": inputs["texts"], "ids": inputs["ids"], "tokenizer": inputs["tokenizer"]}
    fixture["authors"] = {"repository": repo, "commit": commit, "files": CASES[case][1],
                          "transformers": version, "patches": PATCHES["all"] + PATCHES[case]}
    (out / f"{case}.json").write_text(json.dumps(fixture, indent=1, sort_keys=True) + "\n")


# ------------------------------------------------------------------------------------------------ their side
def _stub_modules(prefixes: tuple[str, ...]) -> None:
    """Modules whose names start with `prefixes` import as stubs whose every attribute is a stub."""
    import importlib.abc
    import importlib.machinery

    class Stub(types.ModuleType):
        __path__: list = []

        def __getattr__(self, name):
            if name.startswith("__"):
                raise AttributeError(name)
            return type(name, (), {"__init__": lambda self, *a, **k: None, "__call__": lambda self, *a, **k: None})

    class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, name, path, target=None):
            if name.split(".")[0] in prefixes or name in prefixes:
                return importlib.machinery.ModuleSpec(name, self, is_package=True)
            return None

        def create_module(self, spec):
            return Stub(spec.name)

        def exec_module(self, module):
            pass

    sys.meta_path.insert(0, Finder())


def _environment() -> None:
    m = types.ModuleType("transformers.dependency_versions_check")
    m.dep_version_check = lambda *a, **k: None
    sys.modules["transformers.dependency_versions_check"] = m
    import torch

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)


def _padded(rows: list[list[int]], pad: int, width: int | None = None):
    import torch

    width = width or max(map(len, rows))
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, :len(r)] = torch.tensor(r)
        mask[i, :len(r)] = 1
    return ids, mask


def _stacked(views: list[list[list[int]]], pad: int):
    """(B, S, L) ids and mask of S views of B sentences, padded to the longest of all."""
    import torch

    width = max(len(r) for v in views for r in v)
    pairs = [_padded(v, pad, width) for v in views]
    return torch.stack([p[0] for p in pairs], 1), torch.stack([p[1] for p in pairs], 1)


def _bert_rename(prefix: str):
    def rename(name):
        return name[len(prefix):] if name.startswith(prefix) else None
    return rename


def inside(case: str, inputs_path: str, out_path: str) -> None:
    _environment()
    import common
    import torch

    x = json.loads(Path(inputs_path).read_text())
    result = globals()[f"_case_{case.removesuffix('_dropout')}"](x, common, torch, case.endswith("_dropout"))
    Path(out_path).write_text(json.dumps(result))


def _keys(views: int, b: int, tag: str = "s") -> list:
    """Row keys of a (B, S) batch flattened row-major: (example, view)."""
    return [f"{tag}:{i}:{v}" for i in range(b) for v in range(views)]


def _simcse_model(x, common, torch, dropout, do_mlm=False):
    from simcse.models import BertForCL
    from transformers import BertConfig

    p = common.DROPOUT if dropout else 0.0
    config = BertConfig(vocab_size=x["vocab_size"], hidden_dropout_prob=p, attention_probs_dropout_prob=p,
                        **common.TINY)
    args = types.SimpleNamespace(pooler_type="cls", temp=0.05, hard_negative_weight=0.0, do_mlm=do_mlm, mlm_weight=0.1)
    return config, args, BertForCL


def _simcse_rename(name):
    if name.startswith("bert."):
        return name[5:]
    if name.startswith("mlp."):
        return "head." + name[4:]
    if name.startswith("lm_head."):
        rest = name[len("lm_head."):]
        return "lm_head." + ("bias" if rest == "decoder.bias" else rest)
    return None


def _case_simcse_unsup(x, common, torch, dropout):
    config, args, cls = _simcse_model(x, common, torch, dropout)
    model = cls(config, model_args=args)
    names = common.load(model, _simcse_rename)
    model.train()
    a = x["ids"]["anchors"]
    ids, mask = _stacked([a, a], x["pad"])
    keyed = common.KeyedDropout()
    keyed.watch(model.bert, "backbone", [_keys(2, len(a))])
    with keyed.active():
        out = model(input_ids=ids, attention_mask=mask, token_type_ids=torch.zeros_like(ids))
    out.loss.backward()
    return {"loss": out.loss.item(), "grads": common.fingerprints(model, names), "dropout": dropout,
            "width": ids.shape[-1]}


def _case_simcse_sup(x, common, torch, dropout):
    config, args, cls = _simcse_model(x, common, torch, dropout)
    model = cls(config, model_args=args)
    names = common.load(model, _simcse_rename)
    model.train()
    ids, mask = _stacked([x["ids"]["anchors"], x["ids"]["positives"], x["ids"]["negatives"]], x["pad"])
    out = model(input_ids=ids, attention_mask=mask, token_type_ids=torch.zeros_like(ids))
    out.loss.backward()
    return {"loss": out.loss.item(), "grads": common.fingerprints(model, names), "dropout": dropout,
            "width": ids.shape[-1]}


def _mask_tokens_of_train_py():
    """SimCSE train.py's OurDataCollatorWithPadding.mask_tokens (nested in main()), compiled as written."""
    import ast
    from typing import Optional, Tuple

    import torch

    tree = ast.parse(Path("train.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "mask_tokens":
            module = ast.Module(body=[node], type_ignores=[])
            scope = {"torch": torch, "Optional": Optional, "Tuple": Tuple}
            exec(compile(module, "train.py", "exec"), scope)
            return scope["mask_tokens"]
    raise LookupError("mask_tokens not found in train.py")


def _bert_tokenizer(x):
    """What mask_tokens asks of the tokenizer, answered as BertTokenizerFast answers it (train.py's default,
    use_fast_tokenizer=True): every special id, [PAD] included, is special. (transformers 4.2.1's slow
    BertTokenizer counts only [CLS] and [SEP], so padding could be masked and predicted.)"""
    special = set(x["special"])

    class Tokenizer:
        mask_token = "[MASK]"

        def __len__(self):
            return x["vocab_size"]

        def get_special_tokens_mask(self, ids, already_has_special_tokens=False):
            return [1 if t in special else 0 for t in ids]

        def convert_tokens_to_ids(self, token):
            return x["mask"]

    return Tokenizer()


def _case_simcse_mlm(x, common, torch, dropout):
    import tempfile

    from transformers import BertForPreTraining

    config, args, cls = _simcse_model(x, common, torch, dropout, do_mlm=True)
    # The checkpoint: a BertForPreTraining with the canonical weights (its decoder tied to the embeddings).
    pre = BertForPreTraining(config)
    common.load(pre, lambda n: n[5:] if n.startswith("bert.") else
                ("lm_head." + n[len("cls.predictions."):].replace("decoder.bias", "bias"))
                if n.startswith("cls.predictions.") else None)
    with tempfile.TemporaryDirectory() as folder:
        pre.save_pretrained(folder)
        model = cls.from_pretrained(folder, config=config, model_args=args)
        checkpoint_head = pre.cls.predictions.state_dict()
        loaded = all(torch.equal(v, checkpoint_head[k]) for k, v in model.lm_head.state_dict().items())
        # train.py, for BERT with --do_mlm (lines 371-373):
        pretrained_model = BertForPreTraining.from_pretrained(folder)
        model.lm_head.load_state_dict(pretrained_model.cls.predictions.state_dict())
    tied = model.lm_head.decoder.weight.data_ptr() == model.bert.embeddings.word_embeddings.weight.data_ptr()
    common.load(model, lambda n: _simcse_rename(n) if n.startswith("mlp.") else None)   # not in the checkpoint
    names = {n: _simcse_rename(n) for n, _ in model.named_parameters() if _simcse_rename(n)}
    model.train()
    a = x["ids"]["anchors"]
    ids, mask = _stacked([a, a], x["pad"])
    collator = types.SimpleNamespace(tokenizer=_bert_tokenizer(x), mlm_probability=0.15)
    torch.manual_seed(BATCH_SEED)
    mlm_ids, mlm_labels = _mask_tokens_of_train_py()(collator, ids.view(-1, ids.shape[-1]))
    mlm_ids, mlm_labels = mlm_ids.view(ids.shape), mlm_labels.view(ids.shape)
    out = model(input_ids=ids, attention_mask=mask, token_type_ids=torch.zeros_like(ids), mlm_input_ids=mlm_ids,
                mlm_labels=mlm_labels)
    out.loss.backward()
    return {"loss": out.loss.item(), "grads": common.fingerprints(model, names), "dropout": dropout,
            "width": ids.shape[-1], "mlm_input_ids": mlm_ids.tolist(), "mlm_labels": mlm_labels.tolist(),
            "lm_head_loaded_by_from_pretrained": loaded, "lm_head_tied_to_embeddings": tied,
            "lm_head_loaded_by_train_py": all(torch.equal(v, checkpoint_head[k])
                                              for k, v in pre.cls.predictions.state_dict().items())}


def _case_draws_mlm(x, common, torch, dropout):
    """Category counts of SimCSE's masking over DRAWS draws of the batch's two views: per token that may be
    selected, not selected / [MASK] / a random id / kept; and how often a special or pad token was selected."""
    a = x["ids"]["anchors"]
    ids, _ = _stacked([a, a], x["pad"])
    flat = ids.view(-1, ids.shape[-1])
    collator = types.SimpleNamespace(tokenizer=_bert_tokenizer(x), mlm_probability=0.15)
    mask_tokens = _mask_tokens_of_train_py()
    special = torch.isin(flat, torch.tensor(x["special"]))
    counts = torch.zeros(4, dtype=torch.long)
    special_selected = 0
    torch.manual_seed(BATCH_SEED)
    for _ in range(DRAWS // 10):
        masked, labels = mask_tokens(collator, flat)
        selected = labels != -100
        special_selected += int((selected & special).sum())
        eligible = ~special
        counts[0] += int((eligible & ~selected).sum())
        counts[1] += int((selected & (masked == x["mask"])).sum())
        counts[3] += int((selected & (masked == flat) & (flat != x["mask"])).sum())
        counts[2] += int((selected & (masked != x["mask"]) & (masked != flat)).sum())
    return {"draws": DRAWS // 10, "categories": ["not selected", "mask", "random", "kept"],
            "counts": counts.tolist(), "special_selected": special_selected, "width": flat.shape[-1]}


# -- CARDS
def _faiss_on_cpu(torch):
    import faiss
    import faiss.contrib.torch_utils  # noqa: F401 (what their module imports)

    class Resources:
        def noTempMemory(self):
            pass

    def knn(res, xq, xb, k, D=None, I=None, metric=faiss.METRIC_L2, *a, **kw):
        sim = xq.float() @ xb.float().T
        values, indices = sim.topk(k, dim=1)
        return values, indices

    faiss.StandardGpuResources = Resources
    faiss.knn_gpu = knn


def _cards_model(x, common, torch, k1):
    _faiss_on_cpu(torch)
    from models.bert.modeling_roberta import RobertaConfig
    from models.bert.modeling_simcse import SimCSEForSequenceEmbedding

    config = RobertaConfig(vocab_size=x["vocab_size"], pad_token_id=x["pad"], bos_token_id=0, eos_token_id=2,
                           type_vocab_size=1, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                           **{**common.TINY, "max_position_embeddings": common.TINY["max_position_embeddings"] + 2})
    settings = dict(cl_temperature=0.05, pooler_type="cls", hard_negative_weight=0.0, mlm_loss_weight=0.0,
                    discard_embd_proj=False, label_smoothing=0.0, switch_case_pattern="01",
                    symmetric_contrastive_loss=False, retrieve_dynamic_negatives=k1,
                    sample_retrieved_dynamic_negatives=1, ignore_num_top_retrieved_dynamic_negatives=0,
                    share_sampled_dynamic_negatives=True, retriever_metric="cos",
                    update_retrieved_negatives_representations=False, detach_retrieved_negatives_representations=False,
                    retrieve_using_buffer_representations=True, save_buffer_representations=False,
                    retrieved_and_sampled_knn_type="default", embedding_dropout_prob=0.0, model_type="roberta")
    for key, value in settings.items():
        setattr(config, key, value)
    return config, SimCSEForSequenceEmbedding(config)


def _cards_buffer(x, common, torch):
    """The retrieval's static vectors (one per corpus line, normalised) and the corpus's token ids."""
    corpus = x["ids"]["corpus"]
    g = torch.Generator().manual_seed(BATCH_SEED)
    vectors = torch.nn.functional.normalize(torch.randn((len(corpus), 8), generator=g), dim=1)
    return vectors, corpus


def _cards_rename(name):
    if name.startswith("roberta."):
        return name[len("roberta."):]
    if name.startswith("embedding_projector."):
        return "head." + name[len("embedding_projector."):]
    return None


def _case_cards(x, common, torch, dropout):
    from data.data_collator import DataCollatorForPairedLanguageModeling

    k1 = x["k1"]
    config, model = _cards_model(x, common, torch, k1)
    names = common.load(model, _cards_rename)
    vectors, corpus = _cards_buffer(x, common, torch)
    model.buffer_representations = vectors
    model.buffer_dataset = types.SimpleNamespace(__getitem__=None)

    class Buffer:
        def __getitem__(self, idx):
            return {"input_ids": [[corpus[i]] for i in idx.tolist()],
                    "attention_mask": [[[1] * len(corpus[i])] for i in idx.tolist()]}

    class Tokenizer:          # what the collator's tokenizer.pad needs of RoBERTa's
        pad_token_id, padding_side, model_input_names = x["pad"], "right", ["input_ids", "attention_mask"]

        def pad(self, examples, padding=True, max_length=None, pad_to_multiple_of=None, return_tensors="pt"):
            ids, mask = _padded([e["input_ids"] for e in examples], x["pad"])
            return {"input_ids": ids, "attention_mask": mask}

    model.buffer_dataset = Buffer()
    model.buffer_collator = DataCollatorForPairedLanguageModeling(Tokenizer(), mlm_probability=0.0)
    model.tokenizer = Tokenizer()
    model.train()
    anchors, positives = x["ids"]["anchors"], x["ids"]["positives"]
    ids, mask = _stacked([anchors, anchors, positives], x["pad"])    # pattern 01: [x, x, switch_case(x)]
    query = torch.tensor(x["lines"]).view(-1, 1)
    seen = {}
    original = model.get_knn_ids

    def recording(*a, **k):
        out = original(*a, **k)
        seen["ids"] = out.clone()
        return out

    model.get_knn_ids = recording
    torch.manual_seed(x["seed"])
    out = model(input_ids=ids, attention_mask=mask, ids=query)
    out.loss.backward()
    return {"loss": out.loss.item(), "grads": common.fingerprints(model, names), "dropout": dropout,
            "width": ids.shape[-1], "sampled": seen["ids"].view(-1).tolist(), "k1": k1}


def _case_draws_cards(x, common, torch, dropout):
    """How often each rank of a line's K1 retrieved neighbours (self first) is the one CARDS samples."""
    k1 = x["k1"]
    config, model = _cards_model(x, common, torch, k1)
    vectors, corpus = _cards_buffer(x, common, torch)
    model.buffer_representations = vectors
    query = torch.arange(len(corpus))
    ranked = (vectors @ vectors.T).topk(k1, dim=1).indices
    counts = torch.zeros(k1, dtype=torch.long)
    torch.manual_seed(BATCH_SEED)
    for _ in range(DRAWS // len(corpus)):
        sampled = model.get_knn_ids(query_ids=query).view(-1)
        rank = (ranked == sampled.view(-1, 1)).float().argmax(1)
        counts += torch.bincount(rank, minlength=k1)
    self_first = bool((ranked[:, 0] == query).all())
    return {"draws": (DRAWS // len(corpus)) * len(corpus), "counts_by_rank": counts.tolist(), "k1": k1,
            "self_ranked_first": self_first}


# -- VaSCL
def _vascl_rename(name):
    if name.startswith("bert."):
        return name[5:]
    if name.startswith("contrast_head."):
        return "head." + name[len("contrast_head."):]
    return None


def _case_vascl_official_code(x, common, torch, dropout):
    sys.modules["senteval"] = types.ModuleType("senteval")
    torch.nn.Module.cuda = lambda self, *a, **k: self
    import training
    from models.Transformers import VaSCL_BERT
    from transformers import BertConfig

    p = common.DROPOUT if dropout else 0.0
    config = BertConfig(vocab_size=x["vocab_size"], hidden_dropout_prob=p, attention_probs_dropout_prob=p,
                        **common.TINY)
    model = VaSCL_BERT(config)
    names = common.load(model, _vascl_rename)
    wrapped = torch.nn.DataParallel(model)
    calls = []
    contrast_logits = model.contrast_logits

    def recording(embd1, embd2=None):
        calls.append(embd1.detach().clone())
        return contrast_logits(embd1, embd2)

    model.contrast_logits = recording
    grads = {}

    class Optimizer:
        def step(self):
            grads.update(common.fingerprints(model, names))

        def zero_grad(self):
            pass

    args = types.SimpleNamespace(temperature=0.05, eps=x["delta"], topk=x["neighbours"], max_length=32)
    trainer = training.VaSCL_Trainer(wrapped, None, Optimizer(), None, args)
    model.train()
    a = x["ids"]["anchors"]
    ids, mask = _stacked([a, a], x["pad"])
    keyed = common.KeyedDropout()
    b = len(a)
    views = [[f"s:{i}:{v}" for i in range(b)] for v in (0, 1)]      # two forwards: view 0, then view 1
    keyed.watch(model.bert.embeddings, "backbone", views)
    torch.manual_seed(x["seed"])
    with keyed.active():
        losses = trainer.train_step(ids, mask)
    # contrast_logits: the views' (forward), then the probe's clean, start and final inputs
    clean, start = calls[1], calls[2]
    direction = (start - clean) / x["delta"]
    return {"loss": float(losses["optimized_loss"]), "nt_xent": float(losses["vcl_loss"]),
            "virtual_augmentation": float(losses["lds_loss"]), "grads": grads, "dropout": dropout,
            "width": ids.shape[-1], "probe_start_direction": direction.tolist()}


def _case_draws_vascl(x, common, torch, dropout):
    """The probe's start: VaSCL_Pturb's draw (d = U(-0.5, 0.5)^d over its norm + 1e-8), recorded at
    contrast_logits(inputs + xi * d), as a histogram of its coordinates times sqrt(dim)."""
    from learners.vat_utils import VaSCL_Pturb

    dim, rows = 64, 50
    inputs = torch.zeros((rows, dim))
    starts = []

    class Model:             # what VaSCL_Pturb asks of the (DataParallel-wrapped) model
        def __init__(self):
            self.module = self

        def apply(self, fn):
            return self

        def zero_grad(self):
            pass

        def contrast_logits(self, e, e2=None):
            starts.append(e.detach().clone())
            return torch.nn.functional.normalize(e.sum(1, keepdim=True).expand(-1, 2) + torch.tensor([0.0, 1.0]),
                                                 dim=1)

    def criterion(f1, f2, hard):
        return {"lds_loss": (f1 * f2).sum()}

    probe = VaSCL_Pturb(xi=x["delta"], eps=x["delta"], uni_criterion=criterion, bi_criterion=criterion)
    hard = torch.zeros((rows, 1), dtype=torch.long)
    torch.manual_seed(BATCH_SEED)
    coords = []
    for _ in range(DRAWS // rows // 10):
        starts.clear()
        probe(Model(), inputs, hard)
        coords.append(starts[1] / x["delta"])             # calls: clean, start, final
    unit = torch.cat(coords)
    edges = torch.linspace(-3.5, 3.5, 29)
    hist = torch.histc((unit * dim ** 0.5).clamp(-3.49, 3.49), bins=28, min=-3.5, max=3.5)
    return {"draws": len(unit), "dim": dim, "edges": edges.tolist(), "histogram": hist.long().tolist(),
            "norms": [float(unit.norm(dim=1).min()), float(unit.norm(dim=1).max())]}


# -- AugCSE
def _augcse_rename(name):
    if name.startswith("transformer_model.bert."):
        return name[len("transformer_model.bert."):]
    if name.startswith("projection_layer.net."):
        return "head." + name[len("projection_layer.net."):]
    if name.startswith("discriminator.layers."):
        return "discriminator." + name[len("discriminator.layers."):]
    return None


def _case_augcse_official_code(x, common, torch, dropout):
    _stub_modules(("wandb", "datasets", "evaluation", "testing_part", "transformations", "senteval",
                   "training.generate_text_classification"))
    from training import train_text_classification as ttc
    from training.model import ContrastiveModel
    from transformers import BertConfig, BertForSequenceClassification

    p = common.DROPOUT if dropout else 0.0
    config = BertConfig(vocab_size=x["vocab_size"], hidden_dropout_prob=p, attention_probs_dropout_prob=p,
                        **common.TINY)
    base = BertForSequenceClassification(config)
    n_aug = x["n_augmentations"]
    for key, value in dict(pooler_type="cls", projection_layers=100, projection_heads=0, do_mlm=False,
                           mlm_weight=0.1, moe=False, moe_k=1, discriminate=True, gradient_reverse_multiplier=1.0,
                           discriminator_dropout=0.2 if dropout else 0.0,   # 0.2: its default
                           discriminator_layers=2, discriminate_order=False,
                           discriminate_original=False, num_augmentations=n_aug).items():
        setattr(base.config, key, value)
    model = ContrastiveModel(base)
    names = common.load(model, _augcse_rename)
    model.train()
    trainer = object.__new__(ttc.ContrastiveTrainer)
    trainer.model_args = types.SimpleNamespace(
        contrastive_loss_type="ranking", diff_cse_mode=True, temp=0.05, uniform_t=2, alignment_alpha=2,
        distance_metric=ttc.DistanceMetric.COSINE, discriminate=True, discriminator_weight=0.005,
        supervised_augmentation_loss=False, hard_negative_weight=0.0)
    trainer.model = model
    anchors, augmented = x["ids"]["anchors"], x["ids"]["augmented"]
    ids, mask = _stacked([anchors, augmented], x["pad"])
    b = len(anchors)
    inputs = {"input_ids": ids, "attention_mask": mask, "token_type_ids": torch.zeros_like(ids),
              "aug_labels": torch.ones((b, 1), dtype=torch.long),
              "aug_types": torch.tensor(x["aug_types"]).view(-1, 1)}
    keyed = common.KeyedDropout()
    keyed.watch(base.bert, "backbone", [_keys(3, b)])             # diff_cse_mode: [x, aug, x]
    keyed.watch(model.discriminator, "discriminator", [[f"d:{i}" for i in range(b)]])
    with keyed.active():
        loss = trainer.compute_loss_one_aug(model, inputs)
    loss.backward()
    return {"loss": loss.item(), "grads": common.fingerprints(model, names), "dropout": dropout,
            "width": ids.shape[-1], "discriminator_loss": model.discriminator_loss,
            "contrastive_loss": model.contrastive_loss}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("authors", nargs="?", help="folder of the authors' checkouts, venv and transformers sites")
    parser.add_argument("--case", action="append", choices=sorted(CASES), help="only these cases (default: all)")
    parser.add_argument("--out", default=str(FIXTURES))
    parser.add_argument("--inside", nargs=3, metavar=("CASE", "INPUTS", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.inside:
        inside(*args.inside)
        return
    if not args.authors:
        parser.error("AUTHORS is required")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for case in args.case or sorted(CASES):
        print(f"[authors_conformance] {case}", flush=True)
        run_case(case, Path(args.authors).resolve(), out)


if __name__ == "__main__":
    main()
