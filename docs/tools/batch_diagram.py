#!/usr/bin/env python3
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""Draws docs/batch.png: the batch pipeline (apps/batch) for many volumes, and the Dask path beside it.

usage: python3 docs/tools/batch_diagram.py [output.png]
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch  # noqa: E402


def box(ax, x, y, w, h, text, colour, size=8.5):
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02", fc=colour, ec="black", lw=1))
    ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=size)


def arrow(ax, x0, y0, x1, y1, text="", dy=0.12):
    ax.add_patch(FancyArrowPatch((x0, y0), (x1, y1), arrowstyle="-|>", mutation_scale=12, lw=1.2))
    if text:
        ax.text((x0 + x1) / 2, (y0 + y1) / 2 + dy, text, ha="center", fontsize=7.5, style="italic")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "docs/batch.png"
    fig, ax = plt.subplots(figsize=(16, 7.2))
    ax.set_xlim(0, 16)
    ax.set_ylim(0, 7.2)
    ax.axis("off")
    ax.text(8, 6.95, "SVDLowRankReconstructImage --batch: one process, many volumes", fontsize=12, weight="bold",
            ha="center")

    box(ax, 0.2, 4.9, 2.4, 1.6, "inputs\nfiles, folder + --glob,\n--bids (sub-*/anat),\n--dicom-series\n"
        "existing outputs: skipped", "#e8eef8")
    box(ax, 3.2, 4.9, 2.6, 1.6, "reader threads (R)\ndecode NIfTI/NRRD/DICOM\ninto a leased pinned\n"
        "buffer (float32)", "#dbe8d4")
    box(ax, 6.6, 4.9, 1.6, 1.6, "queue\n(no count\nbound)", "#f0f0f0")
    box(ax, 9.0, 5.75, 2.6, 0.75, "solver, GPU 0: svdlr::Reconstruct\nin place (H2D, solve, D2H)", "#f4d4d4", 8)
    box(ax, 9.0, 4.9, 2.6, 0.75, "solver, GPU 1 ... (--devices)\neach device's resources cached", "#f4d4d4", 8)
    box(ax, 12.4, 4.9, 1.2, 1.6, "queue", "#f0f0f0")
    box(ax, 14.0, 4.9, 1.8, 1.6, "writer threads (W)\ncompress, write\n.partial, rename\n-> output", "#fff2b3")
    arrow(ax, 2.6, 5.7, 3.2, 5.7)
    arrow(ax, 5.8, 5.7, 6.6, 5.7)
    arrow(ax, 8.2, 5.9, 9.0, 6.1)
    arrow(ax, 8.2, 5.5, 9.0, 5.25)
    arrow(ax, 11.6, 6.1, 12.4, 5.9)
    arrow(ax, 11.6, 5.25, 12.4, 5.5)
    arrow(ax, 13.6, 5.7, 14.0, 5.7)

    box(ax, 3.2, 3.3, 12.6, 0.95, "HostBufferPool: every volume in flight holds one buffer, at most --memory MiB leased at once\n"
        "(a reader waits for a writer to give one back); pinned once (svdlr::AllocatePinnedHostMemory) and reused,\n"
        "so the engine copies straight from it instead of through its staging ring", "#dbe8d4")
    arrow(ax, 4.5, 4.25, 4.5, 4.9, "lease")
    arrow(ax, 14.9, 4.9, 14.9, 4.25, "give back")

    ax.text(0.2, 2.75, "While GPU 0 solves volume v, readers decode v+1, v+2, ... and writers compress v-1, v-2, ...: "
            "the GPU's 3-30 ms per volume hides behind I/O that takes 10-1000 ms per volume and thread.",
            fontsize=9)
    ax.text(0.2, 2.4, "A volume that cannot be read, solved or written is a failed row; the others go on. Exit code 4 "
            "and the summary count the failures; a re-run skips every output that exists (outputs appear only by "
            "an atomic rename).", fontsize=9)

    ax.text(8, 1.75, "Python / Dask: the same rules, one task per volume", fontsize=11, weight="bold", ha="center")
    box(ax, 0.2, 0.2, 3.4, 1.2, "reconstruct_with_dask(client or\naddress, inputs, output_dir, ...)\n"
        "find_volumes + output names", "#e8eef8")
    box(ax, 4.4, 0.2, 3.4, 1.2, "client.map(reconstruct_volume, ...)\nany scheduler: LocalCluster,\n"
        "LocalCUDACluster, dask-jobqueue", "#f0f0f0")
    box(ax, 8.6, 0.2, 3.6, 1.2, "worker (one per GPU): read (itk or\nnibabel), svd_low_rank_reconstruction\n"
        "_image_filter, write .partial + rename", "#f4d4d4")
    box(ax, 13.0, 0.2, 2.8, 1.2, "rows gathered: input, output,\nstatus, ranks, sigma, seconds", "#fff2b3")
    arrow(ax, 3.6, 0.8, 4.4, 0.8)
    arrow(ax, 7.8, 0.8, 8.6, 0.8)
    arrow(ax, 12.2, 0.8, 13.0, 0.8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
