# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""The BIDS App: every dwi (and func bold) run of a raw BIDS dataset denoised into a BIDS derivative dataset.

From the command line, ``svdlr-bids BIDS_DIR OUTPUT_DIR participant`` (:mod:`._cli`); from Python::

    from itk_svdlowrankreconstruction import bids
    runs = bids.find_runs("ds000001", participant_labels=["01"])
    bids.prepare_output_dir("ds000001", "derivatives/svdlr", bids.DenoiseOptions(), ["dwi"])
    rows = bids.process_runs(runs, "derivatives/svdlr")

and on a Dask cluster, :func:`itk_svdlowrankreconstruction.denoise_with_dask`. Needs nibabel (and matplotlib for the
reportlets): ``pip install "svdlowrankreconstruction[bids]"``. docs/bids.md describes the outputs."""

from .._nifti_series import DenoiseOptions
from ._cli import main
from ._layout import Run, find_runs
from ._outputs import RunOutputs, outputs_for
from ._runner import (
    COLUMNS,
    DenoiseBatch,
    SeriesJob,
    denoise_one_by_one,
    prepare_output_dir,
    process_run,
    process_runs,
)

__all__ = ["COLUMNS", "DenoiseBatch", "DenoiseOptions", "Run", "RunOutputs", "SeriesJob", "denoise_one_by_one",
           "find_runs", "main", "outputs_for", "prepare_output_dir", "process_run", "process_runs"]
