/*=========================================================================
 *
 *  Copyright SVDLowRankReconstruction contributors
 *
 *  Licensed under the Apache License, Version 2.0 (the "License");
 *  you may not use this file except in compliance with the License.
 *  You may obtain a copy of the License at
 *
 *         https://www.apache.org/licenses/LICENSE-2.0.txt
 *
 *  Unless required by applicable law or agreed to in writing, software
 *  distributed under the License is distributed on an "AS IS" BASIS,
 *  WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 *  See the License for the specific language governing permissions and
 *  limitations under the License.
 *
 *=========================================================================*/
#ifndef svdlrPyDenoiseDoc_h
#define svdlrPyDenoiseDoc_h

// The docstring of _engine.denoise_local_low_rank (svdlrPyDenoise.cpp), kept apart from the binding's code.

namespace svdlr
{
namespace python
{

inline constexpr const char * DenoiseDoc =
  R"doc(Denoises a 4D series by local low-rank approximation (MP-PCA): svdlr::DenoiseLocalLowRank.

This is the engine's low-level entry point; most users want
itk_svdlowrankreconstruction.local_low_rank_denoising_image_filter.

Around every voxel, the patch's Casorati matrix (patch voxels x volumes) keeps only its singular values above the
noise; the voxel takes the row of its own patch (aggregation "centre") or the mean over the patches holding it
("overlap").

Parameters
----------
series : float32 array with 4 dimensions, in host memory
    Any strides: a float32 view is read where it is, without a copy (other dtypes are converted first).
volume_axis : int
    The axis holding the volumes: 0 for ITK's NumPy view (volumes, z, y, x), -1 or 3 for nibabel's
    (x, y, z, volumes). The other three axes are the spatial axes, in array order: patch_size, mask, noise_sigma
    and the maps returned follow that order.
patch_size : 3 odd ints, optional
    Patch extent along the spatial axes. Default: the smallest cube holding at least as many voxels as there are
    volumes (5 x 5 x 5 for 65 volumes), fitted to the image.
patch_stride : int >= 0
    Patches are centred on every patch_stride-th voxel; 1: every voxel (dense); 0 (AUTO_PATCH_STRIDE, the
    default): half the patch's smallest extent (2 for 5 x 5 x 5), 1 with aggregation "centre" or a sphere
    (patch_stride_used). Above 1 it needs an overlap aggregation and a cuboid.
patch_shape : "cuboid" or "sphere", optional
    "cuboid" (the default): patch_size; "sphere": the voxels within patch_radius of the centre voxel (MRtrix3
    dwidenoise2's default shape), the nearest ones inside the image near its borders.
patch_radius : float >= 0
    A sphere's radius in voxels (a radius implies patch_shape "sphere"); 0: the smallest holding 20/17 voxels per
    volume (sqrt(6), 81 voxels, for 65 volumes).
aggregation : "centre", "overlap", "rank" or "gaussian", optional
    "overlap" (the default): the mean over every patch holding the voxel; "centre": its own patch (dwidenoise);
    "rank": that mean weighted by 1 / (1 + the patch's rank); "gaussian": weighted by exp(-d^2 / (2 s^2)), d the
    voxel's distance from the patch's centre voxel, FWHM 2 voxels (dwidenoise2's). The maps are weighted alike.
shrinkage : "auto", "hard" or "frobenius", optional
    "frobenius": Gavish-Donoho's optimal shrinker of the kept singular values (needs sigma: a noise policy or
    noise_sigma); "auto" (the default): "frobenius" where sigma is estimated or given, "hard" otherwise.
policy : "mp", "mp-cg", "gd", "nordic", "fixed" or "energy", optional
    How each patch's rank is chosen: Marchenko-Pastur (Veraart 2016), Marchenko-Pastur (Cordero-Grande 2019,
    dwidenoise 3.0's Exp2; the default), Gavish-Donoho's threshold, a fixed rank (given by rank, which implies
    it), or an energy fraction (given by energy_fraction, which implies it). The same keywords as reconstruct's.
rank : int >= 1, optional
energy_fraction : float in (0, 1], optional
mask : uint8 array of the spatial shape, C-contiguous, optional
    Voxels where it is 0 are copied unchanged and get sigma = 0 and rank 0 in the maps.
noise_sigma : float32 array of the spatial shape, C-contiguous, optional
    A known noise level per voxel, finite and >= 0, used in place of the estimate.
backend : "auto", "cpu" or "cuda"
device_id : int
max_patches_per_batch : int
    0 lets the backend choose.
gpu_memory_limit : str, optional
    The most GPU memory the CUDA backend's buffers may take, e.g. "8G" (K, M, G, T: powers of 1024) or a number
    of bytes; the CUDA context comes on top. None: whatever is free.
threads : int
    CPU worker threads; 0 uses all hardware threads.
progress : callable(done, total), optional
    Called between batches with the GIL held; raise from it to stop. Ctrl-C stops the work at the next batch.
preset : one of DENOISE_PRESETS, optional
    Named settings of policy, aggregation, shrinkage and noise_estimator, which the keywords given override: "default" (the
    defaults) or "dwidenoise" (MRtrix3 dwidenoise 3.0's default output: "mp-cg", "centre", "hard").
vst : bool
    A magnitude series: variance-stabilise it for the Rician (non-central chi with `coils` coils) noise before the
    low-rank step and invert exactly after (Foi 2011); sigma from noise_sigma, else from a first pass of the policy.
noise_floor : bool
    A magnitude series: return the signal with the noise floor removed rather than the magnitude's expectation.
coils : int >= 1
    Coils combined by root-sum-of-squares (1: Rician, also for adaptive or SENSE combination).
volume_groups : sequence of int, optional
    The group of each volume (0 .. groups - 1; demean_groups builds them): each voxel's mean over each group is
    subtracted before the low-rank step and added back after, and the noise fit counts one degree of freedom fewer
    per group. None: no demeaning.
noise_estimator : "mp" or "residual", optional
    How each patch's sigma is measured once its rank is chosen, where the policy estimates sigma: "mp" the
    Marchenko-Pastur fit's mean (dwidenoise's), "residual" the energy outside the kept rank over its degrees of
    freedom, (voxels - rank)(volumes - rank). Default: DEFAULT_DENOISE_NOISE_ESTIMATOR, or the preset's.
sigma_floor_correction : bool
    A magnitude series: correct the sigma estimated on it (the noise map, and the sigma noise_floor uses) for the
    Rician (non-central chi, `coils`) floor's smaller spread. Not with noise_sigma nor vst (ValueError).
gfactor : float32 array of the spatial shape, C-contiguous, optional
    A g-factor map, finite and > 0 at every voxel: the series divided by it before the low-rank step and multiplied
    back after; the noise map is sigma x g.
estimate_gfactor : bool
    Estimate the g-factor map from the series (a first pass of the default policy, its sigma map smoothed and
    divided by the sigma where g = 1: the median of noise_sigma, else the map's 5th percentile), then as gfactor.
    Not with gfactor, vst, noise_floor nor sigma_floor_correction (ValueError).

Returns
-------
(denoised, noise_map, rank_map)
    denoised: a new C-ordered float32 array of the series' shape; noise_map (float32) and rank_map (uint16): the
    spatial shape, sigma and the rank of each voxel's patch.

Raises
------
ValueError
    Not 4 dimensions, fewer than 2 volumes, an empty image, a bad patch size or stride, a mask or noise map of
    another shape, a negative or non-finite noise_sigma, NaN or Inf in the series (the message and the exception's
    `voxel` attribute give its index along the spatial axes, in array order), or an invalid option.
RuntimeError
    The requested backend is unavailable or a device call failed.
KeyboardInterrupt
    Ctrl-C during the work.
)doc";

} // namespace python
} // namespace svdlr

#endif
