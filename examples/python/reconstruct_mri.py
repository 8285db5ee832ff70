#!/usr/bin/env python
# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""Rank-k SVD reconstruction of an MRI, slice by slice, with a before/after figure.

    python examples/python/reconstruct_mri.py                       # Colin27 (Debian: mricron-data)
    python examples/python/reconstruct_mri.py --input brain.nii.gz --rank 30 --output brain_rank30.nii.gz
    python examples/python/reconstruct_mri.py --energy-fraction 0.99 --backend cpu

Needs: pip install "svdlowrankreconstruction[examples]"   (itk and matplotlib)
"""

from __future__ import annotations

import argparse
import sys
import time

import itk
import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from itk_svdlowrankreconstruction import svd_low_rank_reconstruction_image_filter  # noqa: E402

COLIN27 = "/usr/share/mricron/templates/ch2.nii.gz"


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--input", default=COLIN27, help="2D or 3D scalar image readable by ITK (default: %(default)s)")
    parser.add_argument("--output", default="reconstructed.nii.gz", help="reconstructed image (default: %(default)s)")
    parser.add_argument("--figure", default="reconstruct_mri.png", help="before/after PNG (default: %(default)s)")
    policy = parser.add_mutually_exclusive_group()
    policy.add_argument("--rank", type=int, help="singular triplets kept per slice (default: 20)")
    policy.add_argument("--energy-fraction", type=float, help="keep this fraction of each slice's energy instead")
    parser.add_argument("--slice-dimension", type=int, help="ITK axis to cut a volume along: 0=x, 1=y, 2=z (default)")
    parser.add_argument("--backend", choices=["auto", "cpu", "cuda"], default="auto")
    parser.add_argument("--device-id", type=int, default=None)
    arguments = parser.parse_args(argv)
    if arguments.rank is None and arguments.energy_fraction is None:
        arguments.rank = 20
    return arguments


def save_figure(path, original, reconstructed, details, slice_index, arguments):
    """Original, reconstruction and difference of one slice, and its singular value spectrum."""
    difference = reconstructed - original
    low, high = np.percentile(original, [0.5, 99.5])
    limit = max(float(np.abs(difference).max()), 1e-12)
    figure, axes = plt.subplots(1, 4, figsize=(17, 4.4), gridspec_kw={"width_ratios": [1, 1, 1, 1.25]})
    for axis, image, title, options in [
        (axes[0], original, "original", {"cmap": "gray", "vmin": low, "vmax": high}),
        (axes[1], reconstructed, f"rank {details.ranks[slice_index]}", {"cmap": "gray", "vmin": low, "vmax": high}),
        (axes[2], difference, "reconstruction - original", {"cmap": "coolwarm", "vmin": -limit, "vmax": limit}),
    ]:
        shown = axis.imshow(image, origin="lower", **options)
        axis.set_title(title)
        axis.set_axis_off()
        figure.colorbar(shown, ax=axis, fraction=0.046, pad=0.04)
    values = details.singular_values[slice_index]
    values = values[np.isfinite(values)]  # the GPU's subspace solver computes only the leading values (NaN after)
    kept = details.ranks[slice_index]
    axes[3].semilogy(np.arange(1, len(values) + 1), np.maximum(values, np.finfo(float).tiny), ".-", markersize=3)
    axes[3].axvline(kept + 0.5, color="tab:red", linestyle="--", label=f"kept: {kept}")
    axes[3].set_xlabel("index")
    axes[3].set_title("singular values")
    axes[3].legend()
    where = "" if details.slice_dimension is None else f", slice {slice_index} along ITK axis {details.slice_dimension}"
    figure.suptitle(f"{arguments.input}{where} ({details.backend})")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def main(argv=None):
    arguments = parse_arguments(argv)
    image = itk.imread(arguments.input, itk.F)

    start = time.perf_counter()
    result, details = svd_low_rank_reconstruction_image_filter(
        image,
        rank=arguments.rank,
        energy_fraction=arguments.energy_fraction,
        slice_dimension=arguments.slice_dimension,
        backend=arguments.backend,
        device_id=arguments.device_id,
        return_details=True,
    )
    seconds = time.perf_counter() - start
    itk.imwrite(result, arguments.output)

    original = itk.array_view_from_image(image)
    reconstructed = itk.array_view_from_image(result)
    error = np.linalg.norm(reconstructed - original) / max(np.linalg.norm(original), 1e-30)
    print(
        f"{arguments.input}: {original.shape[::-1]} (ITK x, y, z order), {len(details.ranks)} slice(s), "
        f"ranks {details.ranks.min()}..{details.ranks.max()}, backend {details.backend}, {seconds:.3f} s, "
        f"relative Frobenius error {error:.4g}"
    )
    if details.notes:
        print(f"note: {details.notes}")

    if original.ndim == 2:
        slice_index, before, after = 0, original, reconstructed
    else:
        numpy_axis = 2 - details.slice_dimension
        slice_index = original.shape[numpy_axis] // 2  # the middle slice
        before = np.take(original, slice_index, axis=numpy_axis)
        after = np.take(reconstructed, slice_index, axis=numpy_axis)
    save_figure(arguments.figure, before, after, details, slice_index, arguments)
    print(f"wrote {arguments.output} and {arguments.figure}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
