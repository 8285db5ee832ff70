# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""The local low-rank (MP-PCA) denoiser of 4D series, in the style of ITK's Python functional API."""

from __future__ import annotations

import numbers
from typing import Any, Callable, Optional, Sequence, Tuple, Union

import numpy as np

from . import _engine
from ._adapters import check_integer, copy_geometry, to_host


def local_low_rank_denoising_image_filter(
    series: Any,
    *,
    mask: Any = None,
    noise_sigma: Any = None,
    patch_size: Optional[Sequence[int]] = None,
    patch_stride: Optional[int] = None,
    patch_shape: Optional[str] = None,
    patch_radius: float = 0.0,
    aggregation: Optional[str] = None,
    shrinkage: Optional[str] = None,
    policy: Optional[str] = None,
    rank: Optional[int] = None,
    energy_fraction: Optional[float] = None,
    volume_axis: Optional[int] = None,
    backend: str = "auto",
    device_id: int = 0,
    max_patches_per_batch: int = 0,
    gpu_memory_limit: Union[int, str, None] = None,
    threads: int = 0,
    progress: Optional[Callable[[int, int], Any]] = None,
    return_maps: bool = False,
    phase: Any = None,
    phase_filter: Optional[Sequence[float]] = None,
    complex_output: str = "magnitude",
    preset: Optional[str] = None,
    vst: bool = False,
    noise_floor: bool = False,
    coils: Optional[int] = None,
    demean: Optional[str] = None,
    bvalues: Optional[Sequence[float]] = None,
    echoes: int = 1,
    noise_estimator: Optional[str] = None,
    sigma_floor_correction: bool = False,
    gfactor: Any = None,
    estimate_gfactor: Optional[bool] = None,
    magnitude_model: Optional[bool] = None,
) -> Union[Any, Tuple[Any, Any, Any]]:
    """Denoises a 4D series (diffusion, fMRI, multi-echo MRI) by local low-rank approximation: MP-PCA.

    Around every voxel, a patch of neighbouring voxels gives a matrix of patch voxels x volumes; its singular
    values above the noise are kept and the rest dropped. By default the noise level sigma and the rank are
    estimated together from the Marchenko-Pastur law (Cordero-Grande et al. 2019's estimator, MRtrix3 dwidenoise
    3.0's default), each voxel averages every patch holding it, and the kept singular values are shrunk optimally
    (Gavish & Donoho 2017): 0.9-1.9 dB of PSNR above dwidenoise's default on the phantoms of docs/denoising.md.
    ``preset="dwidenoise"`` gives dwidenoise 3.0's default output. The C++ filter
    ``itk::LocalLowRankDenoisingImageFilter`` and the tool ``SVDLowRankDenoiseSeries`` run the same engine.

    Parameters
    ----------
    series : itk.Image of dimension 4, itk.VectorImage, numpy.ndarray, cupy.ndarray or torch.Tensor
        An ``itk.Image`` of dimension 4 (x, y, z, volume) or a 3D ``itk.VectorImage`` with one component per
        volume; or an array with 4 dimensions, one of which holds the volumes (``volume_axis``). Any real dtype;
        the work runs in float32, and a float32 host array is read where it is, whatever its strides.
        CuPy arrays and torch tensors are copied to the host, denoised there and copied back to their device:
        the engine's denoiser takes host memory (its CUDA backend copies patches to the GPU itself).
    mask : optional
        Voxels where it is 0 are copied unchanged and get sigma = 0 and rank 0 in the maps. A 3D ``itk.Image``
        (for an ITK series) or an array of the series' spatial shape (its axes other than ``volume_axis``, in
        array order).
    noise_sigma : float or 3D image/array, optional
        A known noise level, in place of the estimate: one number for every voxel, or one per voxel (a 3D
        ``itk.Image`` or an array of the spatial shape), finite and >= 0. With policy "mp" or "gd", each patch
        keeps the singular values above that policy's threshold for this sigma.
    patch_size : 3 odd ints, optional
        Patch extent along the spatial axes: (x, y, z) for an ITK series, array order for arrays. Default: the
        smallest cube holding at least as many voxels as there are volumes (5 x 5 x 5 for 65 volumes), fitted
        to the image.
    patch_stride : int >= 1, optional
        Patches are centred on every ``patch_stride``-th voxel; 1: every voxel (dense). None (the default): half
        the patch's smallest extent (2 for 5 x 5 x 5, 3 for 7 x 7 x 7; ``_engine.patch_stride_used``), which keeps
        the cost growing as volumes² rather than volumes³; 1 with aggregation "centre" or a sphere. Above 1 it
        needs an overlap aggregation.
    patch_shape : "cuboid" or "sphere", optional
        "cuboid" (the default): ``patch_size``; "sphere": the voxels within ``patch_radius`` of the centre voxel
        (MRtrix3 dwidenoise2's default shape), the nearest ones inside the image near its borders.
    patch_radius : float >= 0
        A sphere's radius in voxels (implies ``patch_shape="sphere"``); 0: the smallest holding 20/17 voxels per
        volume (sqrt(6), 81 voxels, for 65 volumes).
    aggregation : "centre", "overlap", "rank" or "gaussian", optional
        "overlap" (the default): the mean over every patch holding the voxel; "centre" (as dwidenoise): each
        voxel takes the row of its own patch; "rank": the mean weighted by 1 / (1 + the patch's rank);
        "gaussian": weighted by a Gaussian of the voxel's distance from each patch's centre voxel (FWHM 2 voxels,
        as dwidenoise2's). The noise and rank maps are weighted alike.
    shrinkage : "auto", "hard" or "frobenius", optional
        "frobenius": Gavish & Donoho's optimal shrinker of the singular values kept (needs sigma: a noise policy
        or ``noise_sigma``); "hard": kept as they are; "auto" (the default): "frobenius" where sigma is estimated
        or given, "hard" otherwise (a fixed rank or an energy fraction without ``noise_sigma``).
    policy : "mp", "mp-cg", "gd", "nordic", "fixed" or "energy", optional
        How each patch's rank is chosen: Marchenko-Pastur with Veraart et al.'s estimator, Marchenko-Pastur with
        Cordero-Grande et al.'s (2019; the default, dwidenoise 3.0's Exp2), Gavish & Donoho's threshold, NORDIC's
        threshold sigma (sqrt(m) + sqrt(n)) (needs ``noise_sigma``: ValueError without it), a fixed
        ``rank`` (which implies "fixed"), or an ``energy_fraction`` (which implies "energy"). The names and keywords of
        :func:`svd_low_rank_reconstruction_image_filter` too.
    rank : int >= 1, optional
    energy_fraction : float in (0, 1], optional
    volume_axis : int, optional
        For arrays: the axis holding the volumes, 0 (the default: ITK's NumPy view, (volumes, z, y, x)) or -1/3
        (nibabel's (x, y, z, volumes)). For ITK series it follows from the image and may be omitted.
    backend : "auto", "cpu" or "cuda"
    device_id : int
    max_patches_per_batch : int
        Patches per engine batch; 0 lets the backend choose.
    gpu_memory_limit : int or str, optional
        The most GPU memory the CUDA backend's buffers may take: bytes, or a size such as "8G" (K, M, G, T:
        powers of 1024), or "free" (whatever is free), as the tool's ``--gpu-memory-limit``. None: 8 GiB, or
        less when less is free (``_engine.DEFAULT_GPU_MEMORY_LIMIT``). A limit too small for one plane of the
        series and one patch raises ValueError.
    threads : int
        CPU worker threads; 0 uses all hardware threads.
    progress : callable(done, total), optional
        Called between batches. Raise from it to stop; the exception propagates. Ctrl-C also stops the work at
        the next batch, with KeyboardInterrupt.
    phase : image or array of the series' shape, optional
        The phase of a magnitude ``series``, in radians: the complex series ``series * exp(1j * phase)`` is denoised
        with its smooth phase removed first (each volume's complex image low-passed by a Gaussian, its argument
        taken, leaving the voxel itself out), so that the signal lies in the real part and its noise is Gaussian,
        without the Rician floor of the magnitude; the real part is then denoised as any series. A complex
        ``series`` (NumPy complex dtype) takes the same path without ``phase``. docs/denoising-options.md, "Complex data".
    phase_filter : 3 floats, optional
        The Gaussian's standard deviation in voxels along the spatial axes (x, y, z for an ITK series, array order
        for arrays). Default: 2 voxels in plane, none across slices: x and y for ITK series and arrays of volume
        axis 0 (ITK's (volumes, z, y, x)); the first two spatial axes for volume axis 3 (nibabel's (x, y, z,
        volumes)).
    complex_output : "magnitude", "real" or "complex"
        With a phase or a complex series: the magnitude of the denoised real part (the default), the real part
        itself (phase removed), or the complex series with the smooth phase put back (complex64; NumPy only).
    preset : "default" or "dwidenoise", optional
        Named settings of ``policy``, ``aggregation``, ``shrinkage`` and ``noise_estimator``
        (``_engine.DENOISE_PRESETS``), which the
        keywords given override: "dwidenoise" is MRtrix3 dwidenoise 3.0's default ("mp-cg", "centre", "hard"),
        equal to its output to 1e-4; "default" the defaults.
    vst : bool
        A magnitude series: variance-stabilise it for its Rician noise (non-central chi with ``coils`` coils)
        before the low-rank step and invert exactly after (Foi 2011), so that the low-SNR voxels are denoised
        without the noise floor's bias. sigma from ``noise_sigma``, else from a first MP-PCA pass over the
        magnitude. Not with ``phase`` or a complex series (their real part has Gaussian noise already).
        docs/denoising-options.md, "Magnitude data: variance stabilisation and the noise floor".
    noise_floor : bool
        A magnitude series: return the signal with the noise floor removed (the expected magnitude inverted)
        rather than the magnitude; with or without ``vst``.
    coils : int
        Coils combined by root-sum-of-squares in the magnitude (None: the engine's default, 1, Rician; also right
        for adaptive or SENSE combination).
    demean : str
        Subtract each voxel's mean over groups of volumes before the low-rank step and add it back after, with the
        noise fit told of the degrees of freedom removed (dwidenoise2's -demean): "none" (the default), "all",
        "shells" (groups of ``bvalues``, one per volume; b-values within 80 s/mm^2 are one shell) or "echoes" (a
        multi-echo series of ``echoes`` echoes stacked echo after echo on the volume axis).
    bvalues : sequence of float
        The b-value of each volume, for ``demean="shells"``.
    echoes : int
        The number of echoes stacked on the volume axis (a multi-echo series denoised jointly), for
        ``demean="echoes"``.
    noise_estimator : "mp" or "residual", optional
        How each patch's sigma is measured once its rank is chosen, where the policy estimates sigma: "mp" the
        Marchenko-Pastur fit's mean (dwidenoise's; about 2 % low on Gaussian noise), "residual" the energy outside
        the kept rank over its degrees of freedom, (voxels - rank)(volumes - rank) (docs/denoising-options.md, "The noise
        estimator"). None: ``_engine.DEFAULT_DENOISE_NOISE_ESTIMATOR``, or the preset's.
    sigma_floor_correction : bool
        A magnitude series: correct the sigma estimated on it (the noise map, and the sigma ``noise_floor`` uses)
        for the Rician (non-central chi, ``coils``) noise floor, where the magnitude varies less than sigma: with
        ``noise_estimator="residual"`` the map comes within 2 % of the true sigma on the phantoms of
        docs/denoising-options.md ("The noise estimator"). Not with ``noise_sigma``, ``vst``, ``phase`` or a complex series.
    gfactor : 3D image/array, optional
        A g-factor map (parallel imaging's noise amplification), of the series' spatial shape, finite and > 0 at
        every voxel (outside the mask too): the series is divided by it before the low-rank step and multiplied back
        after, as NORDIC does, and the noise map returned is sigma x g, in the series' units. A single
        ``noise_sigma`` is then the sigma where g = 1; a ``noise_sigma`` map is refused (it already holds g). Not
        with ``vst``, ``noise_floor`` or ``sigma_floor_correction``. docs/denoising-options.md, "A given g-factor map".
    estimate_gfactor : bool, optional
        Estimate the g-factor map from the series, as NORDIC does without one: a first pass of the default policy
        gives sigma per voxel, smoothed over one patch extent inside the mask and divided by the sigma where g = 1
        (a single ``noise_sigma``, else the map's 5th percentile in the mask), then as ``gfactor`` with that map.
        With ``policy="nordic"`` and one ``noise_sigma`` it gave 99 % of the true map's gain on the benchmark. Not
        with ``gfactor``, a ``noise_sigma`` map, ``vst``, ``noise_floor`` or ``sigma_floor_correction``
        (ValueError). None: ``_engine.DEFAULT_ESTIMATE_GFACTOR`` (off). docs/denoising-options.md, "An estimated g-factor
        map".
    magnitude_model : bool, optional
        A magnitude series whose sigma is estimated per patch (no ``noise_sigma``, ``gfactor`` or
        ``estimate_gfactor``, a policy that estimates sigma) gets the automatic magnitude model, as if ``vst`` and
        ``noise_floor`` were given: on the phantoms of docs/denoising.md ("Magnitude data") it raised the PSNR at
        every noise level and brought the noise map within dwidenoise's error. None: the preset's (on, off for
        ``preset="dwidenoise"``); False: the magnitude denoised as it is (Gaussian noise, the floor kept); True:
        on whatever the preset. A complex series or one with ``phase`` never takes it. The noise model used:
        ``_engine.magnitude_noise_used``.
    return_maps : bool
        Also return the noise map (float32: sigma of each voxel's patch) and the rank map (uint16: the rank it
        kept), as 3D ``itk.Image`` objects with the series' spatial geometry for ITK series, else as arrays of
        the spatial shape of the series' kind.

    Returns
    -------
    The denoised series, of the kind given, in float32: an ``itk.Image`` or ``itk.VectorImage`` with the
    input's origin, spacing and direction; an array of the input's shape (NumPy; CuPy or torch on the input's
    device). With ``return_maps=True``: ``(denoised, noise_map, rank_map)``.

    Raises
    ------
    ValueError
        A series without 4 dimensions (a single 3D volume) or of fewer than 2 volumes, an empty image, NaN or
        Inf in the series (the message names the voxel: its ITK index [x, y, z] for ITK series, its index along
        the spatial axes for arrays), a mask, noise map or g-factor map of another shape, a g-factor that is not
        finite and > 0 (naming the voxel), a patch size that is even or larger
        than the image, or an invalid option.
    TypeError
        An unsupported object or argument type.
    RuntimeError
        backend="cuda" without a usable CUDA device, or a failure on the device.
    """
    if patch_stride is not None:
        check_integer("patch_stride", patch_stride, 1)
    check_integer("device_id", device_id, 0)
    check_integer("max_patches_per_batch", max_patches_per_batch, 0)
    check_integer("threads", threads, 0)
    if rank is not None:
        check_integer("rank", rank, 1)
    if volume_axis is not None:
        check_integer("volume_axis", volume_axis, -4)

    if (gfactor is not None or estimate_gfactor) and noise_sigma is not None and not isinstance(noise_sigma,
                                                                                                numbers.Real):
        raise ValueError("svdlr: " + _engine.gfactor_known_sigma_problem(known_sigma_map=True))
    itk_series = _ItkSeries.of(series)
    if itk_series is not None:
        if volume_axis is not None and volume_axis % 4 != itk_series.volume_axis:
            raise ValueError(
                f"svdlr: volume_axis {volume_axis} does not fit {itk_series.description}, whose NumPy view holds "
                f"the volumes on axis {itk_series.volume_axis}; leave volume_axis out for ITK images"
            )
        array, axis, wrap, wrap_map = itk_series.array, itk_series.volume_axis, itk_series.wrap, itk_series.wrap_map
        # ITK's axes (x, y, z) are the reverse of the NumPy view's spatial axes.
        if patch_size is not None:
            patch_size = tuple(patch_size)[::-1]
    else:
        host = to_host(series)
        array, axis, wrap, wrap_map = host.array, 0 if volume_axis is None else volume_axis, host.wrap, host.wrap

    array = np.asarray(array)
    complex_input = phase is not None or np.iscomplexobj(array)
    if magnitude_model is False and (vst or noise_floor or sigma_floor_correction):
        raise ValueError("svdlr: magnitude_model=False turns the automatic model off; vst, noise_floor and "
                         "sigma_floor_correction ask for one: give one or the other")
    if complex_input and (vst or noise_floor or sigma_floor_correction or magnitude_model):
        raise ValueError("svdlr: vst, noise_floor, sigma_floor_correction and magnitude_model are for magnitude "
                         "series; with a phase "
                         "or a complex series the phase is removed and the real part's noise is already Gaussian, "
                         "without a floor")
    if complex_output not in ("magnitude", "real", "complex"):
        raise ValueError(f"svdlr: complex_output must be 'magnitude', 'real' or 'complex', got {complex_output!r}")
    if complex_output != "magnitude" and not complex_input:
        raise ValueError(f"svdlr: complex_output={complex_output!r} needs a phase or a complex series")
    if complex_input and array.ndim == 4:
        phase_array = None
        if phase is not None:
            phase_source = _ItkSeries.of(phase)
            phase_array = np.asarray(phase_source.array if phase_source is not None else to_host(phase).array)
        array, smooth_phase = _demodulated(array, phase_array, axis, phase_filter, itk_series is not None, threads)
    if array.ndim != 4:
        raise ValueError(
            f"svdlr: expected a 4D series (three spatial axes and one of volumes), got {array.ndim} dimensions "
            f"(shape {array.shape}); a single volume has no series to denoise"
        )
    if array.dtype.kind not in "fiu":
        raise TypeError(f"svdlr: dtype {array.dtype} is not supported; give real numbers")
    array = np.asarray(array, dtype=np.float32)  # no copy for float32, whatever the strides
    spatial_shape = tuple(n for i, n in enumerate(array.shape) if i != axis % 4)
    check_integer("echoes", echoes, 1)
    groups = _engine.demean_groups(demean or _engine.DEFAULT_DEMEAN, int(array.shape[axis % 4]), int(echoes),
                                   None if bvalues is None else [float(b) for b in bvalues])

    try:
        denoised, noise_map, rank_map = _engine.denoise_local_low_rank(
            array,
            volume_axis=int(axis),
            patch_size=None if patch_size is None else [int(p) for p in patch_size],
            patch_stride=_engine.AUTO_PATCH_STRIDE if patch_stride is None else int(patch_stride),
            patch_shape=patch_shape,
            patch_radius=float(patch_radius),
            aggregation=aggregation,
            shrinkage=shrinkage,
            policy=policy,
            rank=None if rank is None else int(rank),
            energy_fraction=None if energy_fraction is None else float(energy_fraction),
            mask=_mask_array(mask),
            noise_sigma=_sigma_array(noise_sigma, spatial_shape),
            backend=backend,
            device_id=int(device_id),
            max_patches_per_batch=int(max_patches_per_batch),
            gpu_memory_limit=_byte_size_text(gpu_memory_limit),
            threads=int(threads),
            progress=progress,
            preset=preset,
            vst=bool(vst),
            noise_floor=bool(noise_floor),
            **({} if coils is None else {"coils": int(coils)}),
            volume_groups=list(groups) if groups else None,
            noise_estimator=noise_estimator,
            sigma_floor_correction=bool(sigma_floor_correction),
            gfactor=None if gfactor is None else _spatial_map(gfactor, "gfactor"),
            **({} if estimate_gfactor is None else {"estimate_gfactor": bool(estimate_gfactor)}),
            automatic_magnitude_model=False if complex_input else magnitude_model,
        )
    except ValueError as error:
        voxel = getattr(error, "voxel", None)
        if itk_series is not None and voxel is not None:
            index = ", ".join(str(i) for i in reversed(voxel))
            message = f"svdlr: the series holds NaN or Inf at voxel [{index}] (ITK index x, y, z)"
            raise ValueError(message) from error
        patch_axis = getattr(error, "patch_axis", None)
        if itk_series is not None and patch_axis is not None:  # patch_size was given in ITK's (x, y, z): name it so
            axis = 2 - patch_axis
            message = (f"svdlr: patch_size[{axis}] = {patch_size[patch_axis]} exceeds the image's "
                       f"{spatial_shape[patch_axis]} voxels along ITK axis {axis} ({'xyz'[axis]})")
            raise ValueError(message) from error
        raise

    if complex_input:
        if complex_output == "magnitude":
            denoised = np.abs(denoised)
        elif complex_output == "complex":
            if itk_series is not None:
                raise ValueError("svdlr: complex_output='complex' returns NumPy arrays; give the series as arrays")
            denoised = (denoised * np.exp(1j * smooth_phase)).astype(np.complex64)
            return (denoised, noise_map, rank_map) if return_maps else denoised
    output = wrap(denoised)
    if not return_maps:
        return output
    return output, wrap_map(noise_map), wrap_map(rank_map)


def _demodulated(array: np.ndarray, phase: Optional[np.ndarray], axis: int, phase_filter: Any, itk_order: bool,
                 threads: int) -> Tuple[np.ndarray, np.ndarray]:
    """The demodulated real part and the smooth phase (both of the series' shape) of array * exp(1j * phase), or of
    a complex array: svdlr::DemodulatePhase through _engine.demodulate_phase."""
    if phase is not None:
        if np.iscomplexobj(array):
            raise ValueError("svdlr: give a magnitude series with phase=, or a complex series without it")
        if phase.shape != array.shape:
            raise ValueError(f"svdlr: the phase has shape {phase.shape}, the series {array.shape}: they must match")
        z = np.asarray(array, np.float64) * np.exp(1j * np.asarray(phase, np.float64))
    else:
        z = np.asarray(array)
    if not np.all(np.isfinite(z)):
        raise ValueError("svdlr: the complex series (or its phase) holds NaN or Inf")
    axis = axis % 4
    if phase_filter is None:
        # In plane: x and y, which are the last two spatial axes of ITK's order and the first two of nibabel's.
        phase_filter = (0.0, 2.0, 2.0) if (itk_order or axis == 0) else (2.0, 2.0, 0.0)
    elif itk_order:
        phase_filter = tuple(phase_filter)[::-1]  # ITK's (x, y, z) -> the NumPy view's (z, y, x)
    if len(tuple(phase_filter)) != 3:
        raise ValueError(f"svdlr: phase_filter takes 3 widths, got {phase_filter!r}")
    moved = np.moveaxis(z, axis, 0)
    real = np.ascontiguousarray(moved.real, np.float32)
    imag = np.ascontiguousarray(moved.imag, np.float32)
    smooth_phase, demodulated = _engine.demodulate_phase(real, imag, filter_sigma=[float(s) for s in phase_filter],
                                                         threads=int(threads))
    return np.moveaxis(demodulated, 0, axis), np.moveaxis(smooth_phase, 0, axis)


class _ItkSeries:
    """An ITK series: its NumPy view, where the volumes are, and how results go back to ITK objects."""

    def __init__(self, image: Any, itk: Any, vector: bool):
        self.image = image
        self.itk = itk
        self.vector = vector
        self.volume_axis = 3 if vector else 0  # NumPy views: (z, y, x, volumes) and (volumes, z, y, x)
        self.array = itk.array_view_from_image(image)
        dimension = 3 if vector else 4
        self.description = f"an itk.{'VectorImage' if vector else 'Image'} of dimension {dimension}"

    @staticmethod
    def of(data: Any) -> Optional["_ItkSeries"]:
        module = type(data).__module__ or ""
        if not module.startswith("itk"):
            return None
        import itk

        try:
            template, (_, dimension) = itk.template(data)
        except Exception as error:  # not an instantiated ITK template at all
            raise TypeError(f"svdlr: expected an itk.Image or itk.VectorImage, got {type(data).__qualname__}") from error
        if template is itk.Image and dimension == 4:
            return _ItkSeries(data, itk, vector=False)
        if template is itk.VectorImage and dimension == 3:
            return _ItkSeries(data, itk, vector=True)
        if template is itk.Image:
            raise ValueError(
                f"svdlr: expected an itk.Image of dimension 4 (x, y, z, volume) or a 3D itk.VectorImage with one "
                f"component per volume, got an itk.Image of dimension {dimension}"
                + ("; a single volume has no series to denoise" if dimension == 3 else "")
            )
        raise TypeError(
            f"svdlr: expected an itk.Image of dimension 4 or a 3D itk.VectorImage, got {type(data).__qualname__}"
        )

    def wrap(self, result: np.ndarray) -> Any:
        return copy_geometry(self.itk.image_from_array(result, is_vector=self.vector), self.image)

    def wrap_map(self, result: np.ndarray) -> Any:
        """A 3D map on the series' spatial grid: the first three axes of a 4D image's geometry."""
        output = self.itk.image_from_array(np.ascontiguousarray(result))
        if self.vector:
            return copy_geometry(output, self.image)
        origin = list(self.image.GetOrigin())[:3]
        spacing = list(self.image.GetSpacing())[:3]
        direction = self.itk.array_from_matrix(self.image.GetDirection())[:3, :3]
        output.SetOrigin(origin)
        output.SetSpacing(spacing)
        output.SetDirection(self.itk.matrix_from_array(np.ascontiguousarray(direction)))
        return output


def _spatial_array(data: Any, name: str) -> np.ndarray:
    """A mask or noise map as a host array: an itk.Image's NumPy view (z, y, x), or any array's host copy."""
    module = type(data).__module__ or ""
    if module.startswith("itk"):
        import itk

        return itk.array_view_from_image(data)
    try:
        return np.asarray(to_host(data).array)
    except TypeError as error:
        raise TypeError(f"svdlr: {name} must be an itk.Image or an array, got {type(data).__qualname__}") from error


def _mask_array(mask: Any) -> Optional[np.ndarray]:
    """The mask as uint8 in C order (the engine checks its shape against the series' spatial shape)."""
    return None if mask is None else np.ascontiguousarray(_spatial_array(mask, "mask") != 0, dtype=np.uint8)


def _sigma_array(noise_sigma: Any, spatial_shape: Tuple[int, ...]) -> Optional[np.ndarray]:
    if noise_sigma is None:
        return None
    if isinstance(noise_sigma, numbers.Real) and not isinstance(noise_sigma, bool):
        return np.full(spatial_shape, noise_sigma, dtype=np.float32)
    return _spatial_map(noise_sigma, "noise_sigma")


def _spatial_map(value: Any, name: str) -> np.ndarray:
    """A 3D map (noise_sigma, gfactor) as float32 in C order (the engine checks its shape)."""
    return np.ascontiguousarray(_spatial_array(value, name), dtype=np.float32)


def _byte_size_text(value: Union[int, str, None]) -> Optional[str]:
    """A memory size for the engine, which parses it (svdlr::ParseByteSize): a whole number of bytes or a string."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    check_integer("gpu_memory_limit", value, 1)
    return str(int(value))
