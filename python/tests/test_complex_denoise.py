# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""local_low_rank_denoising_image_filter(..., phase=...) and complex series: the phase demodulation against a
float64 NumPy reference, the same result from magnitude + phase and from a complex array in both axis conventions,
the gain over magnitude-only denoising at low SNR, and bad input."""

from __future__ import annotations

import numpy as np
import pytest

from itk_svdlowrankreconstruction import _engine, local_low_rank_denoising_image_filter as denoise

SIGMA = 1.0


def complex_series(rng, shape=(8, 14, 16), volumes=24, snr=2.0):
    """(clean magnitude, noisy complex, true phase) in ITK's NumPy order (volumes, z, y, x): a positive low-rank signal of
    mean SNR `snr`, a smooth phase that changes with each volume, complex Gaussian noise of SIGMA per channel."""
    z, y, x = np.meshgrid(*(np.arange(n, dtype=np.float64) for n in shape), indexing="ij")
    t = np.arange(volumes, dtype=np.float64)[:, None, None, None]
    decay = rng.uniform(0.02, 0.08)
    clean = snr * SIGMA * (1.0 + 0.3 * np.sin(0.4 * x + 0.3 * y)) * np.exp(-decay * t * (1.0 + 0.3 * np.cos(0.3 * z)))
    phase = rng.uniform(-np.pi, np.pi, (volumes, 1, 1, 1)) + 0.15 * x - 0.1 * y + 0.05 * z
    noise = SIGMA * (rng.standard_normal(clean.shape) + 1j * rng.standard_normal(clean.shape))
    return clean.astype(np.float32), (clean * np.exp(1j * phase) + noise).astype(np.complex64), phase


def reference_demodulation(real, imag, sigma):
    """float64, by the definition: per volume, phase = arg of the sum over every other voxel within 3 sigma along
    each axis of prod exp(-d^2 / (2 sigma^2)) z; returns (phase, Re(z exp(-i phase)))."""
    z = real.astype(np.float64) + 1j * imag.astype(np.float64)
    radius = [int(np.ceil(3 * s)) if s > 0 else 0 for s in sigma]
    phase = np.zeros(z.shape)
    n = z.shape[1:]
    for index in np.ndindex(*n):
        total = np.zeros(z.shape[0], complex)
        for offset in np.ndindex(*(2 * r + 1 for r in radius)):
            d = [o - r for o, r in zip(offset, radius)]
            p = [i + di for i, di in zip(index, d)]
            if all(di == 0 for di in d) or any(q < 0 or q >= m for q, m in zip(p, n)):
                continue
            w = np.prod([np.exp(-0.5 * di * di / (s * s)) if s > 0 else 1.0 for di, s in zip(d, sigma)])
            total += w * z[(slice(None),) + tuple(p)]
        phase[(slice(None),) + index] = np.angle(total)
    return phase, (z * np.exp(-1j * phase)).real


def test_engine_demodulation_matches_a_float64_reference(rng):
    real = rng.standard_normal((3, 4, 6, 7)).astype(np.float32) + 3.0
    imag = rng.standard_normal((3, 4, 6, 7)).astype(np.float32) - 1.0
    sigma = (0.6, 1.0, 1.4)
    phase, demodulated = _engine.demodulate_phase(real, imag, filter_sigma=list(sigma), threads=2)
    expected_phase, expected_real = reference_demodulation(real, imag, sigma)
    assert np.max(np.abs(np.angle(np.exp(1j * (phase - expected_phase))))) < 1e-5
    np.testing.assert_allclose(demodulated, expected_real, atol=1e-4)


def test_phase_and_complex_array_give_the_same_result_in_both_axis_conventions(rng):
    _, z, _ = complex_series(rng)
    from_complex = denoise(z, backend="cpu")
    from_phase = denoise(np.abs(z), phase=np.angle(z), backend="cpu")
    np.testing.assert_allclose(from_phase, from_complex, atol=1e-3 * float(np.abs(from_complex).max()))
    # nibabel's order (x, y, z, volumes): the default filter follows x and y there too.
    nibabel = denoise(np.transpose(z, (3, 2, 1, 0)), volume_axis=-1, backend="cpu")
    np.testing.assert_allclose(np.transpose(nibabel, (3, 2, 1, 0)), from_complex, atol=1e-4)


def test_complex_denoising_beats_magnitude_denoising_at_low_snr(rng):
    clean, z, _ = complex_series(rng, snr=2.0)
    magnitude = np.abs(z)
    error = lambda result: float(np.sqrt(np.mean((np.asarray(result, np.float64) - clean) ** 2)))  # noqa: E731
    # Against the magnitude denoised as it is: the automatic magnitude model (the default) closes most of the gap.
    from_magnitude = error(denoise(magnitude, backend="cpu", magnitude_model=False))
    from_complex = error(denoise(magnitude, phase=np.angle(z), backend="cpu"))
    assert from_complex < 0.8 * from_magnitude, (from_complex, from_magnitude, error(magnitude))


def test_complex_output_puts_the_phase_back(rng):
    _, z, true_phase = complex_series(rng, snr=6.0)
    out = denoise(z, complex_output="complex", backend="cpu")
    assert out.dtype == np.complex64 and out.shape == z.shape
    np.testing.assert_allclose(np.abs(out), denoise(z, backend="cpu"), atol=1e-3)
    real = denoise(z, complex_output="real", backend="cpu")
    # The smooth phase is put back: the output's phase is the true (linear) phase, up to the estimate's error.
    strong = np.abs(real) > 3 * SIGMA
    error = np.angle(out * np.exp(-1j * np.broadcast_to(true_phase, out.shape)))[strong]
    # (A phase lost or not put back would leave errors of about pi / 2; the cut kernel at the borders and the noise
    # leave a few tenths of a radian at most.)
    median, p95 = np.percentile(np.abs(error), [50, 95])
    assert median < 0.1 and p95 < 0.35, (median, p95)


def test_bad_complex_input_is_refused(rng):
    _, z, _ = complex_series(rng)
    with pytest.raises(ValueError, match="must match"):
        denoise(np.abs(z), phase=np.angle(z)[:, :-1], backend="cpu")
    with pytest.raises(ValueError, match="needs a phase or a complex series"):
        denoise(np.abs(z), complex_output="complex", backend="cpu")
    with pytest.raises(ValueError, match="magnitude series with phase="):
        denoise(z, phase=np.angle(z), backend="cpu")
    bad = np.angle(z)
    bad[3, 2, 1, 0] = np.nan
    with pytest.raises(ValueError, match="NaN or Inf"):
        denoise(np.abs(z), phase=bad, backend="cpu")
