# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""One set of rank-policy keywords for reconstruction and denoising (policy, rank, energy_fraction, noise_sigma),
with names and tags from the C++ module, and reconstruction's old noise_rank kept as a deprecated alias."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from itk_svdlowrankreconstruction import _engine
from itk_svdlowrankreconstruction import local_low_rank_denoising_image_filter as denoise
from itk_svdlowrankreconstruction import svd_low_rank_reconstruction_image_filter as svdlr_filter
from itk_svdlowrankreconstruction._batch import method_tag


def low_rank_slices(rng, count=3, rows=40, cols=32, rank=4, sigma=1.0):
    signal = np.stack([rng.standard_normal((rows, rank)) @ rng.standard_normal((rank, cols)) * 20.0
                       for _ in range(count)])
    return (signal + sigma * rng.standard_normal(signal.shape)).astype(np.float32)


def low_rank_series(rng, shape=(8, 9, 10), volumes=24):
    profiles = rng.standard_normal((3, volumes))
    weights = rng.standard_normal((3,) + shape)
    clean = np.einsum("kt,kzyx->tzyx", profiles, weights) * 10.0
    return (clean + rng.standard_normal(clean.shape)).astype(np.float32)


def test_the_module_names_every_policy_and_the_noise_ones_among_them():
    assert len(_engine.POLICIES) == len(set(_engine.POLICIES)) >= 5
    assert set(_engine.NOISE_RANKS) < set(_engine.POLICIES)
    for name in _engine.POLICIES:  # each name parses, with its parameter where it needs one
        parameter = {"fixed": {"rank": 3}, "energy": {"energy_fraction": 0.9}}.get(name, {})
        _engine.check_options(policy=name, **parameter)
        assert _engine.output_tag(policy=name, **parameter).startswith("svd-")
        assert _engine.policy_description(policy=name, **parameter).startswith("SVD ")


@pytest.mark.parametrize("name", ["gd", "mp", "mp-cg"])
def test_noise_rank_is_a_deprecated_alias_of_policy(rng, name):
    slices = low_rank_slices(rng)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new spelling does not warn
        new, new_details = svdlr_filter(slices, policy=name, backend="cpu", return_details=True)
    with pytest.warns(DeprecationWarning, match="noise_rank is deprecated"):
        old, old_details = svdlr_filter(slices, noise_rank=name, backend="cpu", return_details=True)
    np.testing.assert_array_equal(new, old)
    np.testing.assert_array_equal(new_details.ranks, old_details.ranks)
    np.testing.assert_array_equal(new_details.noise_sigma, old_details.noise_sigma)
    with pytest.warns(DeprecationWarning):
        assert method_tag(noise_rank=name) == method_tag(policy=name) == _engine.output_tag(policy=name)


def test_policy_names_the_parameter_it_takes(rng):
    slices = low_rank_slices(rng)
    by_rank = svdlr_filter(slices, rank=3, backend="cpu")
    np.testing.assert_array_equal(svdlr_filter(slices, policy="fixed", rank=3, backend="cpu"), by_rank)
    _, details = svdlr_filter(slices, policy="gd", noise_sigma=1.0, backend="cpu", return_details=True)
    np.testing.assert_array_equal(details.noise_sigma, 1.0)
    assert method_tag(policy="gd", noise_sigma=12.5) == "svd-gd-sigma12.5"
    for options, message in [
        ({"policy": "mp", "rank": 3}, "rank goes with policy"),
        ({"policy": "fixed"}, "needs rank"),
        ({"policy": "energy"}, "needs energy_fraction"),
        ({"policy": "mp", "energy_fraction": 0.5}, "energy_fraction goes with policy"),
        ({"policy": "mp", "noise_sigma": 1.0}, "noise_sigma sets Gavish-Donoho's sigma"),
        ({"policy": "svd"}, "policy must be one of"),
    ]:
        with pytest.raises(ValueError, match=message):
            svdlr_filter(slices, backend="cpu", **options)
    with pytest.raises(ValueError, match="not both"), pytest.warns(DeprecationWarning):
        svdlr_filter(slices, policy="mp", noise_rank="mp", backend="cpu")


def test_denoising_takes_the_same_keywords(rng):
    series = low_rank_series(rng)
    fixed, _, ranks = denoise(series, policy="fixed", rank=2, backend="cpu", return_maps=True)
    assert np.all(ranks == 2)
    np.testing.assert_array_equal(denoise(series, rank=2, backend="cpu"), fixed)
    _, _, energy_ranks = denoise(series, policy="energy", energy_fraction=0.999, backend="cpu", return_maps=True)
    _, _, implied = denoise(series, energy_fraction=0.999, backend="cpu", return_maps=True)
    np.testing.assert_array_equal(energy_ranks, implied)
    assert energy_ranks.max() > 0
    for options, message in [
        ({"policy": "mp", "rank": 3}, "rank goes with policy"),
        ({"policy": "energy"}, "needs energy_fraction"),
        ({"policy": "svd"}, "policy must be"),
    ]:
        with pytest.raises(ValueError, match=message):
            denoise(series, backend="cpu", **options)


def test_nordic_takes_sigma_as_given(rng):
    # NORDIC's threshold sigma (sqrt(m) + sqrt(n)) never estimates sigma: without one both paths raise ValueError.
    series = low_rank_series(rng)
    with pytest.raises(ValueError, match="needs a known"):
        denoise(series, policy="nordic", backend="cpu")
    given = np.full(series.shape[1:], 1.0, dtype=np.float32)
    _, sigma, _ = denoise(series, policy="nordic", noise_sigma=given, backend="cpu", return_maps=True)
    np.testing.assert_array_equal(sigma, 1.0)
    slices = low_rank_slices(rng)
    with pytest.raises(ValueError, match="needs a known"):
        svdlr_filter(slices, policy="nordic", backend="cpu")
    _, details = svdlr_filter(slices, policy="nordic", noise_sigma=1.0, backend="cpu", return_details=True)
    np.testing.assert_array_equal(details.noise_sigma, 1.0)
    assert method_tag(policy="nordic", noise_sigma=12.5) == "svd-nordic-sigma12.5"
