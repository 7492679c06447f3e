"""The objective against hand computations: `pytest examples/alignment_uniformity` (sentaug's src on PYTHONPATH)."""
import math
from types import SimpleNamespace

import pytest
import torch

from sentaug.parts import compose
from sentaug_alignment_uniformity.loss import AlignmentUniformity, alignment, uniformity

# Two anchors and their positives on the unit circle: x0 = y0 = (1, 0); x1 = (0, 1), y1 = (1, 0).
X = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
Y = torch.tensor([[1.0, 0.0], [1.0, 0.0]])


def test_alignment_and_uniformity_by_hand():
    # ||x0 - y0||^2 = 0, ||x1 - y1||^2 = 1 + 1 = 2: the mean is 1 (and with alpha = 1, (0 + sqrt 2) / 2)
    assert alignment(X, Y).item() == pytest.approx(1.0)
    assert alignment(X, Y, alpha=1.0).item() == pytest.approx(math.sqrt(2) / 2)
    # x's one pair is 2 apart (squared): log exp(-2 * 2) = -4; y's two rows coincide: log exp(0) = 0
    assert uniformity(X).item() == pytest.approx(-4.0)
    assert uniformity(Y).item() == pytest.approx(0.0)
    # three points 120 degrees apart: every squared distance is 2 - 2 cos 120 = 3, so log exp(-2 * 3) = -6
    angles = torch.tensor([0.0, 2 * math.pi / 3, 4 * math.pi / 3])
    triangle = torch.stack([angles.cos(), angles.sin()], dim=1)
    assert uniformity(triangle).item() == pytest.approx(-6.0, abs=1e-5)
    # four points, pairs at squared distances 2 (four sides) and 4 (two diagonals): log((4 e^-4 + 2 e^-8) / 6)
    square = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
    assert uniformity(square).item() == pytest.approx(math.log((4 * math.exp(-4) + 2 * math.exp(-8)) / 6))


def test_the_objective_normalises_the_projections_and_weighs_uniformity():
    part = compose({"method": "au", "positive": {"source": "dropout"}, "contrastive": "none",
                    "objectives": [{"name": "alignment_uniformity", "uniformity_weight": 0.5}]}).objectives[0]
    assert isinstance(part, AlignmentUniformity)
    # the step's projections, scaled (they are normalised first), anchors then positives
    step = SimpleNamespace(z=torch.cat([3 * X, 0.5 * Y]), blocks={"anchors": slice(0, 2), "positives": slice(2, 4)})
    loss, parts = part.compute(step)
    # alignment 1, uniformity (-4 + 0) / 2 = -2: 1 + 0.5 * -2 = 0
    assert parts["alignment"].item() == pytest.approx(1.0) and parts["uniformity"].item() == pytest.approx(-2.0)
    assert loss.item() == pytest.approx(0.0, abs=1e-6)


def test_a_setting_out_of_range_names_the_method_and_the_setting():
    with pytest.raises(ValueError, match=r"method 'au': objectives.alignment_uniformity.t must be at least 0, got -1"):
        compose({"method": "au", "positive": {"source": "dropout"},
                 "objectives": [{"name": "alignment_uniformity", "t": -1}]})
