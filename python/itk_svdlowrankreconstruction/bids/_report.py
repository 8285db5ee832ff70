# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""The reportlet of one run: what dwidenoise users look at to trust a result.

Top row, the middle axial slice of the reference volume (a b=0 volume for dwi): noisy | denoised | residual |
sigma map | rank map. Bottom row: the histogram of the residuals divided by each voxel's sigma, over every volume
and every voxel with sigma > 0, against the standard normal density it should follow when sigma is right and the
signal was kept. Drawn with matplotlib (the ``bids`` extra); without it there is no reportlet, and the run says so."""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from .._nifti_series import ReportData
from ._outputs import _write_atomically


def matplotlib_missing() -> Optional[str]:
    """Why reportlets cannot be drawn here, or None when they can."""
    try:
        import matplotlib  # noqa: F401, PLC0415
    except ImportError:
        return "no reportlet: matplotlib is not installed (pip install \"svdlowrankreconstruction[bids]\")"
    return None


def write_reportlet(data: ReportData, path: str, title: str) -> None:
    """Draws ``data`` into ``path`` (PNG), written under a temporary name and renamed."""
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure  # noqa: PLC0415 (no pyplot: no global state, safe in worker threads)

    residual = data.noisy - data.denoised
    figure = Figure(figsize=(15, 6.4), dpi=80)
    grid = figure.add_gridspec(2, 5, height_ratios=[1.25, 1], hspace=0.3)
    axes = [figure.add_subplot(grid[0, i]) for i in range(5)]
    low, high = np.percentile(data.noisy, [1, 99.5])
    bound = max(float(np.percentile(np.abs(residual), 99.5)), 1e-12)
    panels = [(data.noisy, "noisy", "gray", low, high), (data.denoised, "denoised", "gray", low, high),
              (residual, "residual", "RdBu_r", -bound, bound),
              (data.sigma, "sigma map", "viridis", 0.0, max(float(data.sigma.max()), 1e-12)),
              (data.rank, "rank map", "magma", 0.0, max(float(data.rank.max()), 1.0))]
    for axis, (image, label, colours, vmin, vmax) in zip(axes, panels):
        # As radiologists look at a slice: x to the right, y up (nibabel's arrays are (x, y)).
        shown = axis.imshow(np.asarray(image, dtype=float).T, cmap=colours, vmin=vmin, vmax=vmax, origin="lower",
                            interpolation="nearest")
        axis.set_title(label)
        axis.set_axis_off()
        if label in ("residual", "sigma map", "rank map"):
            figure.colorbar(shown, ax=axis, shrink=0.8)
    figure.suptitle(f"{title}: volume {data.volume}, middle axial slice")

    histogram = figure.add_subplot(grid[1, :])
    samples = data.normalised_residuals[np.isfinite(data.normalised_residuals)]
    if samples.size:
        edges = np.linspace(-5.0, 5.0, 101)
        histogram.hist(np.clip(samples, -5.0, 5.0), bins=edges, density=True, color="0.6",
                       label=f"residual / sigma ({samples.size} samples, sd {np.std(samples):.2f})")
        x = np.linspace(-5.0, 5.0, 400)
        histogram.plot(x, np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi), color="C3", label="N(0, 1)")
        histogram.legend(loc="upper right")
    else:
        histogram.text(0.5, 0.5, "no voxel with sigma > 0", ha="center", va="center")
    histogram.set_xlabel("residual divided by the voxel's estimated sigma")
    histogram.set_ylabel("density")
    _write_atomically(path, lambda temporary: figure.savefig(temporary, format="png"))
