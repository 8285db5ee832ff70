# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""Nipype interfaces: :class:`DenoiseSeries`, the local low-rank (MP-PCA) denoiser as a Nipype node.

Its inputs and outputs mirror Nipype's ``mrtrix3.DWIDenoise`` (in_file, mask, extent, noise, out_file, and rank as
dwidenoise's -rank), so that a workflow built around dwidenoise can swap the node::

    from nipype import Node
    from itk_svdlowrankreconstruction.interfaces import DenoiseSeries
    denoise = Node(DenoiseSeries(extent=(5, 5, 5), estimator="Exp2"), name="denoise")

It runs in the node's process (no command line): the series is read with nibabel, denoised by
:func:`local_low_rank_denoising_image_filter` and written with its noise and rank maps, each file atomically. Needs
``pip install "svdlowrankreconstruction[nipype]"``."""

from __future__ import annotations

import os
from typing import Any, Dict

from nipype.interfaces.base import BaseInterfaceInputSpec, File, SimpleInterface, TraitedSpec, Tuple, isdefined, traits
from nipype.utils.filemanip import split_filename

from . import _engine
from ._nifti_series import DenoiseOptions, denoise_nifti, policy_with_estimator


class DenoiseSeriesInputSpec(BaseInterfaceInputSpec):
    # As DWIDenoise's.
    in_file = File(exists=True, mandatory=True, desc="input 4D series (NIfTI): dwi, bold, multi-echo")
    mask = File(exists=True, desc="denoise where this 3D image is not 0; copy the rest (sigma 0, rank 0)")
    extent = Tuple((traits.Int, traits.Int, traits.Int),
                   desc="patch extent along x, y, z, each odd (default: the smallest cube of at least as many "
                        "voxels as volumes, as dwidenoise)")
    noise = File(desc="the output noise map (sigma per voxel); default <in_file>_noise")
    rank = File(desc="the output rank map (components kept per voxel); default <in_file>_rank")
    out_file = File(desc="the output denoised series; default <in_file>_denoised")
    estimator = traits.Enum("Exp1", "Exp2", desc="as dwidenoise -estimator: Exp1 = policy mp, Exp2 = policy mp-cg")
    nthreads = traits.Int(0, usedefault=True, desc="CPU threads (0: all)")
    # Ours.
    sigma_map = File(exists=True, desc="a known sigma per voxel (3D), used instead of the estimate")
    noise_sigma = traits.Float(desc="a known sigma for every voxel, used instead of the estimate")
    gfactor_map = File(exists=True, desc="a g-factor map (3D, > 0 everywhere): the series divided by it before the "
                                         "low-rank step and multiplied back, as NORDIC does; noise_sigma is then the "
                                         "sigma where g = 1, and sigma_map is refused with it")
    estimate_gfactor = traits.Bool(desc="estimate the g-factor map from the series (a first MP-PCA pass), as NORDIC "
                                        "does without one; then as gfactor_map. Not with gfactor_map or sigma_map")
    policy = traits.Enum(*_engine.POLICIES,
                         desc=f"how each patch's rank is chosen (default: {_engine.DEFAULT_DENOISE_POLICY})")
    fixed_rank = traits.Int(desc="the rank every patch keeps (policy fixed); dwidenoise's 'rank' is the rank map")
    energy_fraction = traits.Float(desc="with policy energy")
    stride = traits.Int(desc="centre patches on every N-th voxel; 1: every voxel (dense); default: half the "
                             "patch's smallest extent (2 for 5x5x5)")
    aggregation = traits.Enum(*_engine.AGGREGATIONS,
                              desc="centre, overlap, or overlap weighted by rank or by a Gaussian of the distance "
                                   f"(default: {_engine.DEFAULT_DENOISE_AGGREGATION})")
    patch_shape = traits.Enum(*_engine.PATCH_SHAPES,
                              desc=f"cuboid (extent) or sphere (patch_radius) (default: {_engine.DEFAULT_PATCH_SHAPE})")
    patch_radius = traits.Float(desc="a sphere's radius in voxels (implies patch_shape sphere)")
    shrinkage = traits.Enum("auto", "hard", "frobenius",
                            desc="hard, Gavish-Donoho's shrinker (frobenius), or auto: frobenius where sigma is "
                                 f"known or estimated (default: {_engine.DEFAULT_DENOISE_SHRINKAGE})")
    noise_estimator = traits.Enum(*_engine.NOISE_ESTIMATORS,
                                  desc="how each patch's sigma is measured once its rank is chosen: mp "
                                       "(dwidenoise's) or residual (the energy outside the kept rank over its "
                                       f"degrees of freedom; default: {_engine.DEFAULT_DENOISE_NOISE_ESTIMATOR})")
    backend = traits.Enum(*_engine.BACKENDS, usedefault=True, desc="auto (the GPU when usable), cpu or cuda")
    device_id = traits.Int(0, usedefault=True, desc="CUDA device")
    vst = traits.Bool(False, usedefault=True,
                      desc="variance-stabilise the magnitude for its Rician (non-central chi) noise, invert after")
    noise_floor = traits.Bool(False, usedefault=True, desc="output the signal with the noise floor removed")
    sigma_floor_correction = traits.Bool(False, usedefault=True,
                                         desc="correct the sigma map estimated on the magnitude for its noise floor")
    magnitude_model = traits.Bool(desc="the automatic magnitude model: with sigma estimated, the magnitude is "
                                       "variance-stabilised and its noise floor removed, as with vst and "
                                       "noise_floor (default: on; False: the magnitude as it is, dwidenoise's model)")
    coils = traits.Int(desc="coils combined by root-sum-of-squares, for vst, noise_floor and sigma_floor_correction "
                            "(default 1)")
    demean = traits.Enum(*_engine.DEMEAN_CHOICES, desc="subtract each voxel's mean over all volumes, each b-value "
                         "shell (in_bval) or each echo before the low-rank step, add it back after (default: none)")
    in_bval = File(exists=True, desc="the b-values (FSL .bval), for demean='shells'")


class DenoiseSeriesOutputSpec(TraitedSpec):
    out_file = File(exists=True, desc="the denoised series (float32)")
    noise = File(exists=True, desc="the noise map: sigma of each voxel's patch (float32)")
    rank = File(exists=True, desc="the rank map: the rank each voxel's patch kept (uint16)")
    sigma_median = traits.Float(desc="the median sigma inside the mask, where the series holds data (not a "
                                     "zero-filled background)")
    rank_median = traits.Float(desc="the median rank over the same voxels")


class DenoiseSeries(SimpleInterface):
    """Denoises a 4D series by local low-rank approximation (MP-PCA by default, as MRtrix3's dwidenoise)."""

    input_spec = DenoiseSeriesInputSpec
    output_spec = DenoiseSeriesOutputSpec

    def _path(self, name: str, tag: str) -> str:
        value = getattr(self.inputs, name)
        if isdefined(value):
            return os.path.abspath(value)
        _, stem, extension = split_filename(self.inputs.in_file)
        return os.path.abspath(f"{stem}_{tag}{extension if extension in ('.nii', '.nii.gz') else '.nii.gz'}")

    def _options(self, defined: Dict[str, Any]) -> DenoiseOptions:
        # The inputs named as the options are, but rank, the rank map's file here; dwidenoise's extent, fixed_rank and
        # nthreads are the options' patch, rank and threads.
        return DenoiseOptions.of({name: value for name, value in defined.items() if name != "rank"},
                                 patch=defined.get("extent"), rank=defined.get("fixed_rank"),
                                 policy=policy_with_estimator(defined.get("policy"), defined.get("estimator")),
                                 threads=defined["nthreads"])

    def _run_interface(self, runtime):
        out_file, noise, rank = self._path("out_file", "denoised"), self._path("noise", "noise"), \
            self._path("rank", "rank")
        given = {name: getattr(self.inputs, name) for name in self.inputs.copyable_trait_names()}
        defined = {name: value for name, value in given.items() if isdefined(value)}
        result = denoise_nifti(self.inputs.in_file, out_file, noise_map_path=noise, rank_map_path=rank,
                               mask_path=defined.get("mask"), sigma_map_path=defined.get("sigma_map"),
                               gfactor_path=defined.get("gfactor_map"), estimate_gfactor=defined.get("estimate_gfactor"),
                               options=self._options(defined), bval_path=defined.get("in_bval"))
        self._results.update(out_file=out_file, noise=noise, rank=rank, sigma_median=result.sigma["median"],
                             rank_median=result.rank["median"])
        return runtime
