# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""Diffusion signal of the phantom, per voxel, from the tissue fractions and a smooth fibre field.

Compartments (diffusivities in mm^2/s, b in s/mm^2; S0 relative to CSF = 1, as in a T2-weighted b=0 at TE ~ 80 ms):
  CSF    S0 1.00  free water, D = 3.0e-3, isotropic
  GM     S0 0.55  one axially symmetric tensor, l_par 1.0e-3, l_perp 0.75e-3 (FA ~ 0.17), along fibre 1
  WM     S0 0.42  one or two fibres, each an axially symmetric tensor l_par 1.7e-3, l_perp 0.35e-3 (FA ~ 0.75)
  head   S0 0.25  scalp and muscle outside the brain, D = 1.2e-3, isotropic
Fibre 1 runs along a smooth random direction field (Gaussian-filtered white noise, 12 mm, normalised per voxel).
Fibre 2 takes a weight w2 = 0.5 * clip(c, 0, 1) from a smooth standardised field c (8 mm), so about half the white
matter has a crossing; its direction makes an angle of 55 to 90 degrees with fibre 1, varying smoothly.
S0 carries a smooth receive-coil profile (+-15 %, 40 mm) and a fine tissue texture (3 %, 1 voxel), both multiplicative.
"""
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from scipy import ndimage

S0 = {"csf": 1.0, "gm": 0.55, "wm": 0.42, "head": 0.25}
D_CSF = 3.0e-3
D_HEAD = 1.2e-3
GM_TENSOR = (1.0e-3, 0.75e-3)  # (l_par, l_perp)
WM_TENSOR = (1.7e-3, 0.35e-3)


def _smooth_noise(rng, shape, sigma_mm, spacing):
    """Standardised Gaussian-filtered white noise, correlation length sigma_mm."""
    field = ndimage.gaussian_filter(rng.standard_normal(shape), sigma=sigma_mm / np.asarray(spacing), mode="wrap")
    return (field - field.mean()) / field.std()


def _unit(v):
    return v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-12)


def fibre_field(rng, shape, spacing):
    """Directions of fibre 1 and 2 (x, y, z, 3), the weight of fibre 2 (x, y, z), and the S0 modulation."""
    v1 = _unit(np.stack([_smooth_noise(rng, shape, 12.0, spacing) for _ in range(3)], axis=-1))
    u = np.stack([_smooth_noise(rng, shape, 12.0, spacing) for _ in range(3)], axis=-1)
    w = _unit(u - (u * v1).sum(-1, keepdims=True) * v1)  # a direction perpendicular to fibre 1
    angle = np.radians(72.5 + 17.5 * np.tanh(_smooth_noise(rng, shape, 15.0, spacing)))
    v2 = np.cos(angle)[..., None] * v1 + np.sin(angle)[..., None] * w
    w2 = 0.5 * np.clip(_smooth_noise(rng, shape, 8.0, spacing), 0.0, 1.0)
    coil = 1.0 + 0.15 * np.tanh(_smooth_noise(rng, shape, 40.0, spacing))
    texture = 1.0 + 0.03 * _smooth_noise(rng, shape, spacing.min(), spacing)
    return v1, v2, w2, coil * texture


def _stick(b, cos2, tensor):
    """exp(-b g'Dg) for an axially symmetric tensor, given (g . v)^2."""
    l_par, l_perp = tensor
    return np.exp(-b * (l_perp + (l_par - l_perp) * cos2))


def signal(fractions, v1, v2, w2, s0_mod, bvals, bvecs, s0_csf):
    """Noise-free magnitude (x, y, z, volumes), float32, for fractions (4, x, y, z) ordered CSF, GM, WM, head."""
    shape = fractions.shape[1:]
    out = np.empty(shape + (len(bvals),), np.float32)
    b = bvals[None, :]

    def one_slice(z):  # one slice at a time keeps the (voxels, volumes) temporaries small
        f = fractions[:, :, :, z].reshape(4, -1).astype(np.float64)
        c1 = (v1[:, :, z].reshape(-1, 3) @ bvecs.T) ** 2
        c2 = (v2[:, :, z].reshape(-1, 3) @ bvecs.T) ** 2
        wz = w2[:, :, z].reshape(-1, 1)
        wm = (1.0 - wz) * _stick(b, c1, WM_TENSOR) + wz * _stick(b, c2, WM_TENSOR)
        s = (f[0, :, None] * S0["csf"] * np.exp(-b * D_CSF)
             + f[1, :, None] * S0["gm"] * _stick(b, c1, GM_TENSOR)
             + f[2, :, None] * S0["wm"] * wm
             + f[3, :, None] * S0["head"] * np.exp(-b * D_HEAD))
        s *= s0_csf * s0_mod[:, :, z].reshape(-1, 1)
        out[:, :, z, :] = s.reshape(shape[0], shape[1], -1)

    # numpy releases the GIL in these array operations, so slices on threads use every core (200 volumes of
    # 176 x 176 x 120 took minutes on one); each slice writes only its own part of out, and no random numbers are
    # drawn here, so the result does not depend on the thread count.
    with ThreadPoolExecutor(os.cpu_count()) as pool:
        list(pool.map(one_slice, range(shape[2])))
    return out
