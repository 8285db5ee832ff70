# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""The image phase of the complex phantom: smooth in space, different in every volume.

phi_v(r) = B(r) + a_v + g_v . r + c_v (x^2 - y^2)     (radians; r in [-1, 1] per axis, the grid's centre at 0)

  B      a background field shared by all volumes: a low-order polynomial (B0 offset and a linear and quadratic
         field from the receive coils and susceptibility), up to about 2.5 rad across the field of view;
  a_v    the shot-to-shot offset of volume v, uniform in [-pi, pi) (motion and eddy currents between shots);
  g_v    a shot-to-shot linear ramp, each component N(0, 0.6 rad) (a bulk shift during the diffusion encoding);
  c_v    a small shot-to-shot curvature, N(0, 0.3 rad).
Noise-only volumes (noRF) carry no signal, so their phase is the noise's own; this field is not applied to them.
"""
import numpy as np


def coordinates(shape):
    """Normalised coordinates (x, y, z), each in [-1, 1] across its axis, as (nx, ny, nz) arrays."""
    axes = [np.linspace(-1.0, 1.0, n) if n > 1 else np.zeros(1) for n in shape]
    return np.meshgrid(*axes, indexing="ij")


def background(shape, rng):
    """B(r): a constant, linear and quadratic terms, drawn once per phantom."""
    x, y, z = coordinates(shape)
    c = rng.normal(0.0, 1.0, 7)
    return (np.pi * np.tanh(c[0]) + 0.8 * (c[1] * x + c[2] * y) + 0.4 * c[3] * z
            + 0.5 * (c[4] * x * x + c[5] * y * y) + 0.3 * c[6] * x * y)


def volume_phases(shape, volumes, rng):
    """phi_v(r) for v in [0, volumes): float32 (nx, ny, nz, volumes), in radians (not wrapped)."""
    x, y, z = coordinates(shape)
    base = background(shape, rng)
    out = np.empty(tuple(shape) + (volumes,), np.float32)
    for v in range(volumes):
        offset = rng.uniform(-np.pi, np.pi)
        gx, gy, gz = rng.normal(0.0, 0.6, 3)
        curvature = rng.normal(0.0, 0.3)
        out[..., v] = base + offset + gx * x + gy * y + 0.5 * gz * z + curvature * (x * x - y * y)
    return out
