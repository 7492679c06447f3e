"""Each method's objective against a slow, loop-based reimplementation of its paper's equations (values and
gradients), on fixed tensors."""
import math

import pytest
import torch
from torch import nn

from sentaug.objectives.infonce.module import InfoNCE, NTXent
from sentaug.objectives.discriminator.module import AugmentationDiscriminator, grad_reverse
from sentaug.objectives.mlm.module import MaskedLM, mask_tokens
from sentaug.objectives.virtual_augmentation.module import VirtualAugmentation, neighbours


def cos(a, b):
    return torch.dot(a, b) / (a.norm() * b.norm())


def nll(pos, negs, tau):
    """-log e^{pos/tau} / (e^{pos/tau} + sum e^{neg/tau}), written out."""
    num = torch.exp(pos / tau)
    return -torch.log(num / (num + sum(torch.exp(n / tau) for n in negs)))


def test_infonce_with_masked_shared_negatives_matches_a_loop():
    torch.manual_seed(0)
    z1, z2, neg = torch.randn(4, 5), torch.randn(4, 5), torch.randn(3, 5)
    mask = torch.tensor([[True, False, False], [False, False, False], [False, True, False], [False, False, False]])
    tau = 0.1
    expected = sum(nll(cos(z1[i], z2[i]), [cos(z1[i], z2[j]) for j in range(4) if j != i]
                       + [cos(z1[i], neg[c]) for c in range(3) if not mask[i, c]], tau) for i in range(4)) / 4
    assert InfoNCE(tau)(z1, z2, neg, mask).item() == pytest.approx(expected.item(), rel=1e-5)


def test_symmetric_infonce_averages_both_directions():
    torch.manual_seed(1)
    z1, z2, tau = torch.randn(3, 4), torch.randn(3, 4), 0.2
    rows = sum(nll(cos(z1[i], z2[i]), [cos(z1[i], z2[j]) for j in range(3) if j != i], tau) for i in range(3)) / 3
    cols = sum(nll(cos(z2[i], z1[i]), [cos(z2[i], z1[j]) for j in range(3) if j != i], tau) for i in range(3)) / 3
    assert InfoNCE(tau, symmetric=True)(z1, z2).item() == pytest.approx(((rows + cols) / 2).item(), rel=1e-5)


def test_nt_xent_is_vascl_equation_1_over_both_views():
    torch.manual_seed(2)
    z1, z2, tau = torch.randn(3, 4), torch.randn(3, 4), 0.5
    views = torch.cat([z1, z2])
    total = 0.0
    for a in range(6):
        twin = (a + 3) % 6
        total += nll(cos(views[a], views[twin]), [cos(views[a], views[j]) for j in range(6) if j not in (a, twin)],
                     tau)
    assert NTXent(tau)(z1, z2).item() == pytest.approx((total / 6).item(), rel=1e-5)


# -- VaSCL --------------------------------------------------------------------------------------------
def vascl_reference(e, head, delta_star, k, tau):
    """Eq. 5-6 (minus NT-Xent) by loops, given the perturbations."""
    m = len(e)
    sims = [[cos(e[i], e[j]).item() if i != j else -math.inf for j in range(m)] for i in range(m)]
    nbrs = [sorted(range(m), key=lambda j: -sims[i][j])[:k] for i in range(m)]
    z = [head(e[i]) for i in range(m)]
    zs = [head(e[i] + delta_star[i]) for i in range(m)]
    total = 0.0
    for i in range(m):
        negs_for = lambda anchor: [cos(anchor, z[k_]) for k_ in nbrs[i]] + [cos(anchor, zs[k_]) for k_ in nbrs[i]]
        total = total + nll(cos(zs[i], z[i]), negs_for(zs[i]), tau) + nll(cos(z[i], zs[i]), negs_for(z[i]), tau)
    return total / (2 * m), nbrs


def test_vascl_neighbourhood_loss_matches_the_equations_in_value_and_gradient():
    torch.manual_seed(3)
    m, d, k, tau = 6, 4, 2, 0.1
    head = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, 3))
    e = torch.randn(m, d, requires_grad=True)
    va = VirtualAugmentation(temperature=tau, delta=0.7, neighbours=k)
    delta = va.perturbation(e, head, neighbours(e, k), torch.Generator().manual_seed(5))
    ours = va(e, head, torch.Generator().manual_seed(5))
    ref, nbrs = vascl_reference(e, head, delta, k, tau)
    assert ours.item() == pytest.approx(ref.item(), rel=1e-5)
    assert neighbours(e, k).tolist() == nbrs
    g_ours = torch.autograd.grad(ours, [e, *head.parameters()])
    g_ref = torch.autograd.grad(ref, [e, *head.parameters()])
    for a, b in zip(g_ours, g_ref):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)
    assert g_ours[0].abs().sum() > 0  # the paper's loss reaches the encoder


def test_vascl_perturbation_is_the_normalised_gradient_of_equation_2_scaled_to_delta():
    torch.manual_seed(4)
    m, d, k, tau, big_delta = 5, 4, 2, 0.1, 1.5
    head = nn.Linear(d, d)
    e = torch.randn(m, d)
    va = VirtualAugmentation(temperature=tau, delta=big_delta, neighbours=k, init_std=1e-3)
    nbr = neighbours(e, k)
    delta = va.perturbation(e, head, nbr, torch.Generator().manual_seed(0))
    noise = 1e-3 * torch.randn(e.shape, generator=torch.Generator().manual_seed(0))
    for i in range(m):   # per row: gradient of l_N(i)(h(e_i + delta_i), h(e_i)) at the initial noise
        di = noise[i].clone().requires_grad_(True)
        zi = head(e[i] + di)
        loss = nll(cos(zi, head(e[i]).detach()), [cos(zi, head(e[j]).detach()) for j in nbr[i].tolist()], tau)
        (g,) = torch.autograd.grad(loss, di)
        torch.testing.assert_close(delta[i], big_delta * g / g.norm(), rtol=1e-4, atol=1e-6)
    multi = VirtualAugmentation(temperature=tau, delta=big_delta, neighbours=k, steps=4)
    norms = multi.perturbation(e, head, nbr, torch.Generator().manual_seed(0)).norm(dim=1)
    assert (norms <= big_delta + 1e-5).all()


def test_vascl_official_code_variant_trains_only_the_head():
    torch.manual_seed(6)
    head = nn.Linear(4, 4)
    e = torch.randn(6, 4, requires_grad=True)
    loss = VirtualAugmentation(temperature=0.1, delta=1.0, neighbours=2, detach_representation=True)(e, head)
    loss.backward()
    assert e.grad is None and head.weight.grad.abs().sum() > 0


# -- AugCSE ---------------------------------------------------------------------------------------------
def test_gradient_reversal_is_identity_forward_and_minus_alpha_backward():
    x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = grad_reverse(x, 0.3)
    assert torch.equal(y, x)
    (y * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    torch.testing.assert_close(x.grad, torch.tensor([-0.3, -0.6, -0.9]))


def test_discriminator_is_bce_on_one_hot_labels_and_its_gradient_reaches_the_encoder_reversed():
    torch.manual_seed(7)
    disc = AugmentationDiscriminator(hidden_size=3, n_classes=4, alpha=2.0, dropout=0.0)
    z_orig, z_aug = torch.randn(5, 3, requires_grad=True), torch.randn(5, 3)
    labels = torch.tensor([0, 3, 1, 1, 2])
    loss = disc(z_orig, z_aug, labels)
    p = torch.sigmoid(disc.net(torch.cat([z_orig, z_aug], 1)))
    expected = 0.0
    for i in range(5):
        for c in range(4):
            y = 1.0 if labels[i] == c else 0.0
            expected -= y * torch.log(p[i, c]) + (1 - y) * torch.log(1 - p[i, c])
    assert loss.item() == pytest.approx((expected / 20).item(), rel=1e-5)
    (g_disc,) = torch.autograd.grad(loss, z_orig, retain_graph=True)
    (g_plain,) = torch.autograd.grad((expected / 20), z_orig)
    torch.testing.assert_close(g_disc, -2.0 * g_plain, rtol=1e-4, atol=1e-7)


def test_discriminator_accuracy_is_the_share_of_rows_whose_top_logit_is_the_label():
    disc = AugmentationDiscriminator(hidden_size=2, n_classes=3, alpha=1.0, dropout=0.0)
    with torch.no_grad():   # logits = [o_0, o_1, a_0] of the input [o_0, o_1; a_0, a_1]: readable by hand
        disc.net[1].weight.copy_(torch.eye(4))
        disc.net[1].bias.zero_()
        disc.net[4].weight.copy_(torch.tensor([[1.0, 0, 0, 0], [0, 1.0, 0, 0], [0, 0, 1.0, 0]]))
        disc.net[4].bias.zero_()
    z_orig = torch.tensor([[0.9, 0.1], [0.1, 0.8], [0.2, 0.1], [0.5, 0.4]])
    z_aug = torch.tensor([[0.0, 0.0], [0.3, 0.0], [0.7, 0.0], [0.1, 0.0]])
    labels = torch.tensor([0, 1, 0, 2])     # top classes (tanh keeps the order): 0, 1, 2, 0 -> 2 of 4 right
    loss, accuracy = disc.loss_and_accuracy(z_orig, z_aug, labels)
    assert accuracy.item() == 0.5 and not accuracy.requires_grad
    assert loss.item() == pytest.approx(disc(z_orig, z_aug, labels).item())


# -- MLM ------------------------------------------------------------------------------------------------
def test_mlm_masking_follows_80_10_10_and_never_touches_special_tokens():
    ids = torch.randint(10, 1000, (400, 50))
    special = torch.zeros_like(ids, dtype=torch.bool)
    special[:, 0] = special[:, -1] = True
    masked, labels = mask_tokens(ids, special, mask_id=3, vocab_size=1000, probability=0.15,
                                 generator=torch.Generator().manual_seed(0))
    selected = labels != -100
    assert not selected[special].any()
    assert selected.float().sum() / (~special).sum() == pytest.approx(0.15, abs=0.005)
    assert torch.equal(labels[selected], ids[selected]) and torch.equal(masked[~selected], ids[~selected])
    n = selected.sum().item()
    as_mask = (masked[selected] == 3).sum().item() / n
    kept = (masked[selected] == ids[selected]).sum().item() / n
    assert as_mask == pytest.approx(0.8, abs=0.01)
    assert kept == pytest.approx(0.1 + 0.1 / 1000, abs=0.01)   # 10 % kept (+ random draws that hit the same id)
    again, _ = mask_tokens(ids, special, 3, 1000, 0.15, torch.Generator().manual_seed(0))
    assert torch.equal(masked, again)


class MaskTokenizer:
    """What MaskedLM reads of a tokenizer: a 50-word vocabulary; ids 0, 1, 2 and the mask, 4, are special."""
    mask_token_id, all_special_ids = 4, [0, 1, 2, 4]

    def __len__(self):
        return 50


def tiny_bert_mlm():
    """A one-layer BERT with its masked-LM head over MaskTokenizer's vocabulary, dropout off."""
    from transformers import BertConfig, BertForMaskedLM

    return BertForMaskedLM(BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                      intermediate_size=32, hidden_dropout_prob=0.0,
                                      attention_probs_dropout_prob=0.0)).eval()


def whole_sequence_mlm_loss(model, masked, attention_mask, labels):
    """The reference: Hugging Face's logits at every position, cross-entropy averaged over the selected ones."""
    logits, pos = model(input_ids=masked, attention_mask=attention_mask).logits, labels != -100
    return -torch.log_softmax(logits[pos], -1).gather(1, labels[pos].unsqueeze(1)).mean()


def test_mlm_loss_is_cross_entropy_on_the_selected_positions():
    torch.manual_seed(8)
    model = tiny_bert_mlm()
    ids = torch.randint(5, 50, (3, 9))
    ids[:, 0], ids[:, -1] = 2, 1
    att = torch.ones_like(ids)
    mlm = MaskedLM(model.cls, MaskTokenizer(), probability=0.3)
    loss = mlm(model.bert, ids, att, torch.Generator().manual_seed(1))
    special = torch.isin(ids, torch.tensor(MaskTokenizer.all_special_ids))
    masked, labels = mask_tokens(ids, special, 4, 50, 0.3, torch.Generator().manual_seed(1))
    expected = whole_sequence_mlm_loss(model, masked, att, labels)
    assert loss.item() == pytest.approx(expected.item(), rel=1e-5)
    # The head runs on the selected positions only; the gradients are those of the whole-sequence logits
    grads = torch.autograd.grad(loss, list(model.parameters()), allow_unused=True)
    reference = torch.autograd.grad(expected, list(model.parameters()), allow_unused=True)
    for got, want in zip(grads, reference):
        assert (got is None) == (want is None)
        if got is not None:
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-7)

    # CLEAR's "Double MLM": two masks drawn one after the other from the same generator, losses summed
    double = MaskedLM(model.cls, MaskTokenizer(), probability=0.3, copies=2)(model.bert, ids, att,
                                                                         torch.Generator().manual_seed(1))
    g = torch.Generator().manual_seed(1)
    expected = 0.0
    for _ in range(2):
        masked, labels = mask_tokens(ids, special, 4, 50, 0.3, g)
        expected += whole_sequence_mlm_loss(model, masked, att, labels)
    assert double.item() == pytest.approx(expected.item(), rel=1e-5)
    assert double.item() != pytest.approx(2 * loss.item(), rel=1e-3)     # the second mask differs


def test_mlm_with_nothing_selected_is_a_zero_loss_that_still_backpropagates():
    model = tiny_bert_mlm()
    ids = torch.randint(5, 50, (2, 6))
    loss = MaskedLM(model.cls, MaskTokenizer(), probability=0.0)(model.bert, ids, torch.ones_like(ids))
    loss.backward()
    assert loss.item() == 0.0
    assert all(torch.all(p.grad == 0) for p in model.parameters() if p.grad is not None)
