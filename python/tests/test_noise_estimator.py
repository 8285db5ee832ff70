# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""noise_estimator= (the engine's NoiseEstimator): the residual refit of a patch's sigma against a float64 refit
written here from numpy's SVD of that patch, the preset's estimator overridden, and bad names refused."""

from __future__ import annotations

import numpy as np
import pytest

from itk_svdlowrankreconstruction import _engine

VOLUMES = 30
SHAPE = (9, 9, 9)  # z, y, x
PATCH = 3


def low_rank_series(rng):
    """Rank 2 plus Gaussian noise of sigma 1, ITK's NumPy order (volumes, z, y, x)."""
    voxels = int(np.prod(SHAPE))
    signal = 6.0 * rng.standard_normal((VOLUMES, 2)) @ rng.standard_normal((2, voxels))
    noisy = signal + rng.standard_normal((VOLUMES, voxels))
    return noisy.reshape(VOLUMES, *SHAPE).astype(np.float32)


def test_residual_refit_is_the_float64_refit_of_each_centre_patch(rng):
    series = low_rank_series(rng)
    _, sigma, rank = _engine.denoise_local_low_rank(series, patch_size=[PATCH] * 3, aggregation="centre",
                                                    shrinkage="hard", backend="cpu", noise_estimator="residual")
    _, mean, mean_rank = _engine.denoise_local_low_rank(series, patch_size=[PATCH] * 3, aggregation="centre",
                                                        shrinkage="hard", backend="cpu", noise_estimator="mp")
    np.testing.assert_array_equal(rank, mean_rank)  # the estimator changes sigma, not the rank
    rows = PATCH ** 3
    checked = 0
    for z in range(1, SHAPE[0] - 1):
        for y in range(1, SHAPE[1] - 1):
            for x in range(1, SHAPE[2] - 1):
                patch = series[:, z - 1:z + 2, y - 1:y + 2, x - 1:x + 2].reshape(VOLUMES, rows).astype(np.float64)
                s = np.linalg.svd(patch, compute_uv=False)
                r = int(rank[z, y, x])
                expected = np.sqrt(np.sum(s[r:] ** 2) / ((rows - r) * (VOLUMES - r)))
                assert sigma[z, y, x] == pytest.approx(expected, rel=1e-5), (z, y, x, r)
                if r > 0:
                    assert sigma[z, y, x] > mean[z, y, x]
                checked += 1
    assert checked == 7 ** 3


def test_the_preset_sets_the_estimator_and_a_keyword_overrides_it(rng):
    series = low_rank_series(rng)
    assert _engine.DEFAULT_DENOISE_NOISE_ESTIMATOR in _engine.NOISE_ESTIMATORS
    assert set(_engine.NOISE_ESTIMATORS) == {"mp", "residual"}
    _, preset, _ = _engine.denoise_local_low_rank(series, preset="dwidenoise", backend="cpu")
    _, mp, _ = _engine.denoise_local_low_rank(series, preset="dwidenoise", noise_estimator="mp", backend="cpu")
    _, refit, _ = _engine.denoise_local_low_rank(series, preset="dwidenoise", noise_estimator="residual",
                                                 backend="cpu")
    np.testing.assert_array_equal(preset, mp)  # dwidenoise's sigma is the Marchenko-Pastur mean
    assert np.all(refit >= mp) and np.any(refit > mp)


def test_an_unknown_estimator_is_refused(rng):
    with pytest.raises(ValueError, match="noise_estimator"):
        _engine.denoise_local_low_rank(low_rank_series(rng), noise_estimator="exp2", backend="cpu")
