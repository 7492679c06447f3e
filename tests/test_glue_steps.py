"""GLUE fine-tuning on the step machinery, checked on the CPU: pairs tokenized once and padded give what the
tokenizer gives per batch; the default CPU path gives the earlier per-batch loop's losses bit for bit (a copy of
that loop is the reference, R-drop and switch-case on, with a cased tokenizer so that switch-case changes ids);
length buckets hold every example once per epoch, each in the smallest bucket that fits it, with as many steps
as before; and a bucketed step's loss and updated weights equal a hand-written step on the same batch (R-drop's
KL from torch's kl_div, the gradient clipped at 1.0, AdamW)."""
import math
import random

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from transformers import BertConfig, BertModel, BertTokenizerFast

from sentaug.evaluate import glue, glue_steps
from sentaug.evaluate.glue_steps import GlueBatches, bucket_widths, encode_pairs, pad_batch

WORDS = ("the cat sat on a mat while dog ran far away from home to see old friends who lived near river "
         "bank and Paris London Monday people said it was good bad fine").split()


@pytest.fixture(autouse=True)
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def cased(tmp_path_factory):
    """A cased WordPiece tokenizer whose vocabulary holds every word in both cases (switch-case changes ids)."""
    folder = tmp_path_factory.mktemp("cased")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *sorted({v for w in WORDS for v in (w, w.capitalize(),
                                                                                              w.lower())})]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    return BertTokenizerFast(str(folder / "vocab.txt"), do_lower_case=False)


def pairs(n: int, seed: int = 0, regression: bool = False) -> glue.GlueSplit:
    """Sentence pairs of 1 to 40 words each (so lengths spread over several buckets), random labels."""
    rng = random.Random(seed)
    a = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 40))) for _ in range(n)]
    b = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12))) for _ in range(n)]
    labels = np.array([rng.uniform(0, 5) for _ in range(n)]) if regression else np.array([rng.randint(0, 1)
                                                                                           for _ in range(n)])
    return glue.GlueSplit(a, b, labels)


def tiny_model(tokenizer, seed: int = 0):
    torch.manual_seed(seed)
    cfg = BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
                     max_position_embeddings=128)
    return BertModel(cfg).train()


def head_for(backbone, n_out: int, seed: int = 1):
    torch.manual_seed(seed)
    return glue._build_head(backbone, n_out).train()


def test_pairs_tokenized_once_and_padded_are_what_the_tokenizer_gives_per_batch(cased, minilm_path):
    from transformers import AutoTokenizer

    split = pairs(40, seed=3)
    for tok in (cased, AutoTokenizer.from_pretrained(minilm_path)):
        encoded = encode_pairs(tok, split.text_a, split.text_b, max_length=24)     # some pairs truncated
        idx = [5, 0, 17, 33, 2]
        ours = pad_batch(tok, encoded, idx)
        theirs = tok([split.text_a[i] for i in idx], [split.text_b[i] for i in idx], padding=True, truncation=True,
                     max_length=24, return_tensors="pt")
        assert set(ours) == set(theirs) and all(torch.equal(ours[k], theirs[k]) for k in ours)
        fixed = pad_batch(tok, encoded, idx, width=24)
        theirs = tok([split.text_a[i] for i in idx], [split.text_b[i] for i in idx], padding="max_length",
                     truncation=True, max_length=24, return_tensors="pt")
        assert all(torch.equal(fixed[k], theirs[k]) for k in fixed)


def earlier_loop(backbone, head, tok, train, cfg, regression: bool) -> list[float]:
    """The per-batch fine-tuning loop before the step machinery (sentaug 0.x, evaluate/glue.py), as it was:
    tokenizing each batch, one switch-case generator drawn batch by batch, default AdamW, clipping at 1.0."""
    from transformers import get_linear_schedule_with_warmup

    from sentaug.models.poolers import pool

    n = len(train.labels)
    steps_per_epoch = math.ceil(n / cfg.batch_size)
    total = cfg.max_steps
    no_decay = ("bias", "LayerNorm.weight", "layer_norm.weight", "norm.weight")
    params = [*backbone.named_parameters(), *(("head." + k, p) for k, p in head.named_parameters())]
    groups = [{"params": [p for k, p in params if not k.endswith(no_decay)], "weight_decay": cfg.weight_decay},
              {"params": [p for k, p in params if k.endswith(no_decay)], "weight_decay": 0.0}]
    optimizer = torch.optim.AdamW(groups, lr=cfg.learning_rate)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(cfg.warmup_ratio * total), total)
    labels_t = torch.as_tensor(train.labels, dtype=torch.float32 if regression else torch.long)
    case_rng = random.Random(cfg.seed)

    def forward(a, b):
        enc = tok(a, b, padding=True, truncation=True, max_length=cfg.max_seq_length, return_tensors="pt")
        out = backbone(**enc, return_dict=True)
        return head(pool("avg", out, enc["attention_mask"])).float()

    def task_loss(out, y):
        return F.mse_loss(out[:, 0], y) if regression else F.cross_entropy(out, y)

    losses = []
    for step in range(total):
        epoch, pos = divmod(step, steps_per_epoch)
        order = torch.randperm(n, generator=torch.Generator().manual_seed(cfg.seed * 1_000_003 + epoch))
        idx = order[pos * cfg.batch_size:(pos + 1) * cfg.batch_size].tolist()
        a, b, y = [train.text_a[i] for i in idx], [train.text_b[i] for i in idx], labels_t[idx]
        out1 = forward(a, b)
        loss = task_loss(out1, y)
        a = [glue.switch_case(t, cfg.switch_case, case_rng) for t in a]
        b = [glue.switch_case(t, cfg.switch_case, case_rng) for t in b]
        out2 = forward(a, b)
        reg = F.mse_loss(out1[:, 0], out2[:, 0]) if regression else glue.symmetric_kl(out1, out2)
        loss = 0.5 * (loss + task_loss(out2, y)) + cfg.rdrop * reg
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_([p for _, p in params], 1.0)
        optimizer.step()
        scheduler.step()
        losses.append(float(loss.detach()))
    return losses


@pytest.mark.parametrize("regression", [False, True])
def test_the_cpu_default_gives_the_earlier_loops_losses_bit_for_bit(cased, regression):
    train = pairs(50, seed=1, regression=regression)       # 7 steps an epoch: 12 steps cross an epoch's end
    cfg = glue.FinetuneConfig(learning_rate=1e-3, batch_size=8, max_steps=12, rdrop=0.7, switch_case=0.5, seed=4,
                              max_seq_length=32)
    runs = []
    for new in (True, False):
        backbone = tiny_model(cased)
        head = head_for(backbone, 1 if regression else 2)
        torch.manual_seed(9)
        if new:
            run = glue.fine_tune(backbone, head, cased, train, regression, "avg", cfg, torch.device("cpu"),
                                 progress=False)
            assert run.batching == "order" and run.step_path["path"] == "eager" and run.steps == 12
            runs.append(run.losses)
        else:
            runs.append(earlier_loop(backbone, head, cased, train, cfg, regression))
    assert runs[0] == runs[1]
    assert len(set(runs[0])) == 12        # (twelve distinct steps, not one repeated)


def test_bucket_widths_pad_least_as_every_choice_of_widths_tried_in_turn_shows():
    import itertools

    rng = np.random.default_rng(0)
    for lengths in (rng.integers(3, 60, 300), np.concatenate([rng.integers(5, 20, 500), rng.integers(90, 140, 40)]),
                    np.array([9, 9, 9, 31])):
        limit = 128
        capped = np.minimum(lengths, limit)
        multiples = [w for w in range(8, limit + 1, 8) if w >= 8]

        def padded(widths):
            return sum(min(w for w in widths if w >= n) for n in capped)

        top = min(w for w in multiples if w >= capped.max())          # the widest must hold the longest pair
        best = min(padded((*rest, top)) for k in range(0, 4) for rest in itertools.combinations(
            [w for w in multiples if w < top], k))
        widths = bucket_widths(lengths, limit)
        assert widths[-1] == limit and padded(widths) == best and len(widths) <= 5
    assert bucket_widths(np.array([9, 9, 9, 31]), 128) == (16, 32, 128)      # no width that pads nothing less
    assert bucket_widths(np.array([], dtype=np.int64), 64) == (64,)


def test_buckets_hold_every_example_once_per_epoch_in_the_smallest_bucket_that_fits(cased):
    train = pairs(203, seed=2)
    labels = torch.as_tensor(train.labels)
    batches = GlueBatches(cased, train, labels, batch_size=16, max_length=48, seed=5, batching="buckets",
                          switch_p=0.5, fixed=True)
    widths = batches.widths
    assert len(widths) >= 3 and widths[-1] == 48
    original = batches.original.lengths
    for e in range(3):
        epoch = batches.epoch(e)
        lengths = np.maximum(original, epoch.switched.lengths)     # an example and its switch-cased copy fit
        idx = [i for b, _ in epoch.batches for i in b.tolist()]
        assert sorted(idx) == list(range(203))                     # every example exactly once
        assert len(epoch.batches) == math.ceil(203 / 16)          # as many steps as slices of the order
        sizes = [len(b) for b, _ in epoch.batches]
        assert all(s == 16 for s in sizes[:-1]) and sizes[-1] == 203 % 16
        smallest = np.searchsorted(np.asarray(widths), lengths)   # each example's own bucket
        for b, width in epoch.batches:
            assert width in widths and lengths[b].max() <= width
        whole = [(b, w) for b, w in epoch.batches if len(b) == 16 and (smallest[b] == widths.index(w)).all()]
        assert len(whole) >= len(epoch.batches) - len(widths)     # at most one pooled remainder per bucket
        # the step inputs: padded to the batch's width, the labels of its examples
        if e == 0:
            for k in (0, len(epoch.batches) - 1):
                inputs = batches(k)
                b, width = epoch.batches[k]
                assert inputs.tensors["input_ids"].shape == (len(b), width)
                assert inputs.tensors["switched_input_ids"].shape == (len(b), width)
                assert torch.equal(inputs.tensors["labels"], labels[torch.from_numpy(b)])
                assert inputs.full == (len(b) == 16)
    # a new epoch, a new order (and new batches)
    assert batches.epoch(3).batches[0][0].tolist() != batches.epoch(4).batches[0][0].tolist()


def switched_copies(train, p: float, seed: int, batch_size: int, epochs: int):
    """The switch-cased copy of each example in epoch `epochs - 1`, drawn as documented: one generator walks each
    epoch's permutation batch by batch, first texts then second texts."""
    rng = random.Random(seed)
    n = len(train.text_a)
    for e in range(epochs):
        order = torch.randperm(n, generator=torch.Generator().manual_seed(seed * 1_000_003 + e)).tolist()
        a, b = {}, {}
        for s in range(0, n, batch_size):
            chunk = order[s:s + batch_size]
            a.update({i: glue.switch_case(train.text_a[i], p, rng) for i in chunk})
            b.update({i: glue.switch_case(train.text_b[i], p, rng) for i in chunk})
    return a, b


@pytest.mark.parametrize("regression", [False, True])
def test_a_bucketed_step_is_a_hand_written_step_on_the_same_batch(cased, regression):
    train = pairs(90, seed=4, regression=regression)
    for seed in range(20):          # a seed whose first step is a whole batch of a bucket narrower than the limit
        plan = GlueBatches(cased, train, torch.as_tensor(train.labels), 16, 48, seed, "buckets", 0.5).epoch(0)
        idx, width = plan.batches[0]
        if len(idx) == 16 and width < 48:
            break
    assert len(idx) == 16 and width < 48
    cfg = glue.FinetuneConfig(learning_rate=5e-3, batch_size=16, max_steps=1, rdrop=0.8, switch_case=0.5, seed=seed,
                              max_seq_length=48, warmup_ratio=0.0, batching="buckets")
    outputs = 1 if regression else 2
    backbone, reference = tiny_model(cased), tiny_model(cased)
    head, ref_head = head_for(backbone, outputs), head_for(reference, outputs)
    torch.manual_seed(11)
    run = glue.fine_tune(backbone, head, cased, train, regression, "avg", cfg, torch.device("cpu"), progress=False)

    # the reference: the same examples padded to the bucket's width by the tokenizer, two dropout passes
    a, b = switched_copies(train, 0.5, cfg.seed, 16, 1)
    rows = idx.tolist()
    y = torch.as_tensor(train.labels[rows], dtype=torch.float32 if regression else torch.long)

    def logits(texts_a, texts_b):
        enc = cased(texts_a, texts_b, padding="max_length", truncation=True, max_length=width, return_tensors="pt")
        hidden = reference(**enc).last_hidden_state
        mask = enc["attention_mask"].unsqueeze(-1).float()
        return ref_head((hidden * mask).sum(1) / mask.sum(1))

    torch.manual_seed(11)
    out1 = logits([train.text_a[i] for i in rows], [train.text_b[i] for i in rows])
    out2 = logits([a[i] for i in rows], [b[i] for i in rows])
    if regression:       # R-drop's choice for STS-B: squared error to the label, and between the two outputs
        loss = 0.5 * (((out1[:, 0] - y) ** 2).mean() + ((out2[:, 0] - y) ** 2).mean()) \
            + 0.8 * ((out1[:, 0] - out2[:, 0]) ** 2).mean()
    else:
        lp1, lp2 = F.log_softmax(out1, -1), F.log_softmax(out2, -1)
        kl = 0.5 * (F.kl_div(lp2, lp1, log_target=True, reduction="batchmean")
                    + F.kl_div(lp1, lp2, log_target=True, reduction="batchmean"))
        loss = 0.5 * (F.cross_entropy(out1, y) + F.cross_entropy(out2, y)) + 0.8 * kl
    assert run.losses[0] == pytest.approx(loss.item(), rel=1e-6)

    loss.backward()
    weights = [*reference.parameters(), *ref_head.parameters()]
    norm = torch.sqrt(sum((p.grad ** 2).sum() for p in weights if p.grad is not None))
    assert norm > 1.0 or not regression    # the regression's step is clipped (its gradient is longer than 1)
    names = [*(n for n, _ in reference.named_parameters()), *(f"head.{n}" for n, _ in ref_head.named_parameters())]
    decayed = [p for n, p in zip(names, weights) if not n.endswith(("bias", "LayerNorm.weight"))]
    plain = [p for n, p in zip(names, weights) if n.endswith(("bias", "LayerNorm.weight"))]
    for p in weights:
        if p.grad is not None:
            p.grad.mul_(min(1.0, 1.0 / (norm.item() + 1e-6)))
    # AdamW's first moment after one step: 0.1 x the clipped gradient
    state = run.optimizer.state          # (each tensor to float32 rounding of its largest entry)
    assert all((state[p]["exp_avg"] - 0.1 * q.grad).abs().max() <= 1e-5 * 0.1 * q.grad.abs().max() + 1e-12
               for p, q in zip([*backbone.parameters(), *head.parameters()], weights) if q.grad is not None)
    torch.optim.AdamW([{"params": decayed, "weight_decay": 0.01}, {"params": plain, "weight_decay": 0.0}],
                      lr=5e-3).step()
    ours = [*backbone.parameters(), *head.parameters()]
    assert all(torch.allclose(p, q, rtol=0, atol=1e-6) for p, q in zip(ours, weights))
    moved = sum(not torch.equal(p, q) for p, q in zip(ours, [*tiny_model(cased).parameters(),
                                                             *head_for(tiny_model(cased), outputs).parameters()]))
    assert moved > 10                                 # the step changed the weights


def test_prediction_is_in_the_splits_order_whatever_the_batches(cased):
    train = pairs(37, seed=5)
    backbone = tiny_model(cased).eval()
    head = head_for(backbone, 2).eval()
    whole = glue_steps.predict(backbone, head, cased, train, "avg", False, batch_size=64, max_seq_length=48)
    small = glue_steps.predict(backbone, head, cased, train, "avg", False, batch_size=5, max_seq_length=48)
    assert whole.shape == (37,) and np.array_equal(whole, small)
    enc = cased(train.text_a, train.text_b, padding=True, truncation=True, max_length=48, return_tensors="pt")
    with torch.no_grad():
        hidden = backbone(**enc).last_hidden_state
        mask = enc["attention_mask"].unsqueeze(-1).float()
        expected = head((hidden * mask).sum(1) / mask.sum(1)).argmax(-1).numpy()
    assert np.array_equal(whole, expected)


def test_unknown_batching_and_a_graph_on_the_cpu_are_clear_errors(cased):
    train = pairs(10)
    backbone = tiny_model(cased)
    head = head_for(backbone, 2)
    with pytest.raises(ValueError, match="unknown batching 'sorted': choose from auto, order, buckets"):
        glue.fine_tune(backbone, head, cased, train, False, "avg", glue.FinetuneConfig(batching="sorted"),
                       torch.device("cpu"), progress=False)
    with pytest.raises(ValueError, match="step mode 'graph' needs a CUDA device"):
        glue.fine_tune(backbone, head, cased, train, False, "avg", glue.FinetuneConfig(step="graph"),
                       torch.device("cpu"), progress=False)
