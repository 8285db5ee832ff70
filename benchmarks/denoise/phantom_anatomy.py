# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""Anatomy of the phantom: tissue partial-volume fractions of the Colin27 brain on a DWI-like grid.

Source: Colin27 (Holmes et al. 1998), the average of 27 T1-weighted scans of one subject at 1 mm, as Debian's
mricron-data ships it: ch2.nii.gz (the head) and ch2bet.nii.gz (the same image, brain-extracted).

Segmentation (simple and documented, not FAST/SPM):
  1. the brain is ch2bet > 0;
  2. inside it, three class means (CSF < GM < WM in T1) come from 1-D k-means on the intensities;
  3. partial-volume fractions are linear in intensity between neighbouring class means: below the CSF mean all CSF,
     between CSF and GM a CSF/GM mix, between GM and WM a GM/WM mix, above the WM mean all WM;
  4. outside the brain, head tissue (scalp, muscle) is the part of ch2 brighter than the background, as a fraction
     ramping from intensity 15 to 45 (skull stays near 0, as in a DWI).
Resampling to the target grid: each 1 mm fraction map is blurred by a Gaussian whose FWHM is about one target voxel
(a voxel's point spread) and sampled trilinearly at the target voxel centres; fractions stay in [0, 1] and add up to
at most 1. The grid covers a 224 mm field of view in-plane (x, y) and the brain's extent plus 10 mm along z, centred
on the brain, with axes parallel to Colin27's (RAS).
"""
import os

import numpy as np
from scipy import ndimage

import dwi_io

TEMPLATES = "/usr/share/mricron/templates"  # Debian's mricron-data; gpu_bundle.sh carries the two files elsewhere
FOV_XY_MM = 224.0
Z_MARGIN_MM = 10.0
TISSUES = ("csf", "gm", "wm", "head")


def class_means(values, iterations=50):
    """Means of three intensity classes by 1-D k-means, started at the 10th, 50th and 90th percentiles."""
    means = np.percentile(values, [10, 50, 90]).astype(np.float64)
    for _ in range(iterations):
        label = np.abs(values[:, None] - means[None, :]).argmin(1)
        means = np.array([values[label == k].mean() for k in range(3)])
    return np.sort(means)


def fractions_1mm(head, brain, means):
    """Fractions (4, x, y, z) of CSF, GM, WM and head tissue at Colin27's 1 mm resolution."""
    csf_mean, gm_mean, wm_mean = means
    t = head.astype(np.float64)
    inside = brain > 0
    low = np.clip((t - csf_mean) / (gm_mean - csf_mean), 0.0, 1.0)   # 0 at CSF, 1 at GM
    high = np.clip((t - gm_mean) / (wm_mean - gm_mean), 0.0, 1.0)   # 0 at GM, 1 at WM
    csf = np.where(inside, 1.0 - low, 0.0)
    wm = np.where(inside, high, 0.0)
    gm = np.where(inside, low - high, 0.0)
    other = np.where(inside, 0.0, np.clip((t - 15.0) / 30.0, 0.0, 1.0))
    return np.stack([csf, gm, wm, other]).astype(np.float32)


def target_grid(brain, size):
    """Colin27 voxel coordinates of the target voxel centres' axes, the spacing (mm) and the target affine."""
    nx, ny, nz = size
    idx = np.argwhere(brain > 0)
    lo, hi = idx.min(0), idx.max(0)
    centre = (lo + hi) / 2.0
    spacing = np.array([FOV_XY_MM / nx, FOV_XY_MM / ny, (hi[2] - lo[2] + 1 + Z_MARGIN_MM) / nz])
    axes = [centre[d] + (np.arange(n) - (n - 1) / 2.0) * spacing[d] for d, n in enumerate(size)]
    origin = np.array([a[0] for a in axes])
    return axes, spacing, origin


def resample(volume_1mm, axes, spacing):
    """Blur by a Gaussian of FWHM ~ one target voxel (in 1 mm units), then sample trilinearly at the target grid."""
    blurred = ndimage.gaussian_filter(volume_1mm.astype(np.float32), sigma=spacing / 2.355, mode="constant")
    grid = np.meshgrid(*axes, indexing="ij")
    return ndimage.map_coordinates(blurred, grid, order=1, mode="constant", cval=0.0)


def build(size, templates=TEMPLATES):
    """Tissue fractions (4, nx, ny, nz), brain mask (nx, ny, nz) bool, affine (4x4), and facts for the sidecar."""
    head, colin_affine = dwi_io.load_nifti(os.path.join(templates, "ch2.nii.gz"))
    brain, _ = dwi_io.load_nifti(os.path.join(templates, "ch2bet.nii.gz"))
    means = class_means(head[brain > 0].astype(np.float64))
    fractions = fractions_1mm(head, brain, means)
    axes, spacing, origin = target_grid(brain, size)
    resampled = np.stack([np.clip(resample(f, axes, spacing), 0.0, 1.0) for f in fractions])
    brain_fraction = resample((brain > 0).astype(np.float32), axes, spacing)
    mask = brain_fraction >= 0.5
    index_to_colin = np.eye(4)
    index_to_colin[:3, :3] = np.diag(spacing)
    index_to_colin[:3, 3] = origin
    affine = colin_affine @ index_to_colin
    facts = {"t1_class_means_csf_gm_wm": [round(float(m), 2) for m in means],
             "spacing_mm": [round(float(s), 4) for s in spacing],
             "mask_voxels": int(mask.sum())}
    return resampled, mask, affine, facts
