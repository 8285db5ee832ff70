# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""Diffusion gradient tables for the phantom: directions spread by electrostatic repulsion, and the schemes.

Directions are unit vectors; a direction and its opposite measure the same signal, so the repulsion acts between
each point and both the others and their antipodes (Jones et al. 1999). The start is a golden-angle spiral on the
upper hemisphere, so the table is deterministic and needs no seed.
"""
import numpy as np


def electrostatic_directions(count, iterations=400):
    """`count` unit vectors (count, 3) on the upper hemisphere, spread by antipodally symmetric repulsion."""
    i = np.arange(count) + 0.5
    z = 1.0 - i / count  # spiral over the upper hemisphere, from the pole down to the equator
    phi = i * np.pi * (3.0 - np.sqrt(5.0))
    r = np.sqrt(1.0 - z * z)
    x = np.stack([r * np.cos(phi), r * np.sin(phi), z], axis=1)
    step = 0.05
    energy = _energy(x)
    for _ in range(iterations):
        force = np.zeros_like(x)
        for sign in (1.0, -1.0):  # the other points and their antipodes
            d = x[:, None, :] - sign * x[None, :, :]
            dist = np.linalg.norm(d, axis=2)
            np.fill_diagonal(dist, np.inf)
            force += (d / dist[..., None] ** 3).sum(axis=1)
        force -= (force * x).sum(1, keepdims=True) * x  # keep the move tangent to the sphere
        trial = x + step * force / np.abs(force).max()
        trial /= np.linalg.norm(trial, axis=1, keepdims=True)
        trial_energy = _energy(trial)
        if trial_energy < energy:
            x, energy, step = trial, trial_energy, step * 1.1
        else:
            step *= 0.5
    x[x[:, 2] < 0] *= -1.0
    return x


def _energy(x):
    total = 0.0
    for sign in (1.0, -1.0):
        dist = np.linalg.norm(x[:, None, :] - sign * x[None, :, :], axis=2)
        np.fill_diagonal(dist, np.inf)
        total += (1.0 / dist).sum()
    return total


def min_angle_degrees(x):
    """The smallest angle between two directions of the table, treating opposite vectors as equal."""
    c = np.abs(x @ x.T)
    np.fill_diagonal(c, 0.0)
    return float(np.degrees(np.arccos(np.clip(c.max(), -1.0, 1.0))))


def scheme(volumes):
    """b-values (s/mm^2) and unit directions (volumes, 3) for a series of `volumes` volumes.

    Up to 70 volumes: one b=0 first, then volumes-1 directions at b=1000 (65 -> 1 + 64, a common clinical scheme).
    More: one b=0 every tenth volume (interleaved, as scanners do to track drift), and the rest on two shells,
    a third at b=1000 and two thirds at b=2000, each shell with its own repulsion set (100 -> 10 + 30 + 60).
    """
    if volumes < 2:
        raise ValueError(f"a diffusion series needs at least 2 volumes, got {volumes}")
    if volumes <= 70:
        bvals = np.r_[0.0, np.full(volumes - 1, 1000.0)]
        bvecs = np.vstack([np.zeros(3), electrostatic_directions(volumes - 1)])
        return bvals, bvecs
    b0 = np.arange(volumes) % 10 == 0
    weighted = volumes - int(b0.sum())
    inner = weighted // 3
    dirs = [electrostatic_directions(inner), electrostatic_directions(weighted - inner)]
    shell_b = np.r_[np.full(inner, 1000.0), np.full(weighted - inner, 2000.0)]
    # Alternate the shells through the series so neither sits at one end of the acquisition.
    phase = np.r_[np.linspace(0, 1, inner, endpoint=False), np.linspace(0, 1, weighted - inner, endpoint=False)]
    order = np.argsort(phase, kind="stable")
    shell_dirs = np.vstack(dirs)[order]
    bvals = np.zeros(volumes)
    bvecs = np.zeros((volumes, 3))
    bvals[~b0] = shell_b[order]
    bvecs[~b0] = shell_dirs
    return bvals, bvecs
