#!/usr/bin/env python3
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""Draws docs/pipeline.png: the CUDA backend's components and how batches flow through them.

usage: python3 docs/tools/pipeline_diagram.py [output.png]
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch  # noqa: E402


def box(ax, x, y, w, h, text, colour):
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02", fc=colour, ec="black", lw=1))
    ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=8.5, wrap=True)


def arrow(ax, x0, y0, x1, y1, text="", style="-|>"):
    ax.add_patch(FancyArrowPatch((x0, y0), (x1, y1), arrowstyle=style, mutation_scale=12, lw=1.2))
    if text:
        ax.text((x0 + x1) / 2, (y0 + y1) / 2 + 0.12, text, ha="center", fontsize=7.5, style="italic")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "docs/pipeline.png"
    fig, ax = plt.subplots(figsize=(16, 6.2))
    ax.set_xlim(0, 16)
    ax.set_ylim(0, 6.2)
    ax.axis("off")

    # Host side
    ax.text(1.6, 5.95, "host", fontsize=11, weight="bold", ha="center")
    box(ax, 0.2, 4.6, 2.8, 1.0, "caller's buffer\n(pageable: ITK image, NumPy;\npinned: copied directly)", "#e8eef8")
    box(ax, 0.2, 3.1, 2.8, 1.1, "staging ring (pageable only)\nup to 8 host threads x\n2 pinned 512 KiB chunks", "#dbe8d4")
    box(ax, 0.2, 1.6, 2.8, 1.1, "host loop\nretire(b-2) | launch(b) | finish(b-1)\nSelectRank, progress, abort", "#f6e6c8")
    box(ax, 0.2, 0.3, 2.8, 0.9, "solver thread per batch\n(XsyevBatched blocks its caller)\nslots + ring cached between runs", "#f6e6c8")
    arrow(ax, 1.6, 4.6, 1.6, 4.2, "memcpy")

    # Copy engines
    ax.text(4.3, 5.95, "PCIe copy engines", fontsize=11, weight="bold", ha="center")
    box(ax, 3.5, 3.9, 1.6, 0.7, "H2D engine", "#dbe8d4")
    box(ax, 3.5, 2.9, 1.6, 0.7, "D2H engine", "#dbe8d4")
    arrow(ax, 3.0, 3.9, 3.5, 4.2)
    arrow(ax, 3.5, 3.2, 3.0, 3.5)

    # Streams
    ax.text(10.6, 5.95, "GPU: two stream slots, each with its own cuBLAS + cuSOLVER handles and buffers",
            fontsize=11, weight="bold", ha="center")
    stages = [("copy in\n(batch b+1)", "#dbe8d4"), ("float64 convert\n+ NaN flags", "#e8eef8"),
              ("Gram AᵀA\ncuBLAS DGEMM", "#e8eef8"), ("subspace iter.\nG Q, CholeskyQR;\nw x w eigen", "#f4d4d4"),
              ("factors P, Q\ncuBLAS", "#e8eef8"), ("R = P Qᵀ\nour tiled kernel", "#fff2b3"),
              ("copy out\n(batch b-1)", "#dbe8d4")]
    for row, y in enumerate((3.9, 2.4)):
        ax.text(5.45, y + 0.95, f"stream slot {row} (batches {'0, 2, 4' if row == 0 else '1, 3, 5'}, ...)",
                fontsize=8.5)
        for i, (text, colour) in enumerate(stages):
            x = 5.45 + i * 1.5
            box(ax, x, y, 1.3, 0.75, text, colour)
            if i:
                arrow(ax, x - 0.2, y + 0.37, x, y + 0.37)
    arrow(ax, 5.1, 4.25, 5.45, 4.25)
    ax.add_patch(FancyArrowPatch((5.45 + 6 * 1.5 + 0.65, 2.4), (4.3, 2.9), arrowstyle="-|>", mutation_scale=12,
                                 lw=1.2, connectionstyle="bar,fraction=-0.08"))
    ax.text(3.4, 1.35, "while slot 0 solves batch b, slot 1 copies batch b+1 in and batch b-1 out: "
            "copies overlap compute on both copy engines", fontsize=9, ha="left")
    ax.text(3.4, 0.95, "batch size from cudaMemGetInfo and cuSOLVER's workspace; halved and retried on "
            "out-of-memory; ranks per slice come back to the host between the solve and the product",
            fontsize=8.5, ha="left")
    ax.text(3.4, 0.72, "Solver::Exact (float64 data, energy fractions, few small slices): the n x n Gram "
            "matrix goes to XsyevBatched instead of the subspace iteration", fontsize=8.5, ha="left")
    ax.text(3.4, 0.5, "ReconstructOnDevice: the same slots, with device-to-device copies instead of "
            "the staging ring (CuPy / PyTorch arrays never visit the host)", fontsize=8.5, ha="left")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
