# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""One NIfTI series file in, its denoised series and noise and rank maps out: the per-series step that the BIDS App
(:mod:`.bids`), its Dask path and the Nipype interface (:mod:`.interfaces`) share.

Headers, affines and sform/qform codes go through nibabel; the voxels are read and .nii.gz files written by the
tools' own reader and writer (decompressed once, compressed on every core; the data in float32), the
denoising through :func:`local_low_rank_denoising_image_filter`. Every file is written under a hidden temporary name
beside its target, checked, then renamed (the rules of :mod:`._batch`), so that an output that exists is complete."""

from __future__ import annotations

import math
import threading
import time
from dataclasses import asdict, dataclass, fields
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import _engine

#: dwidenoise's -estimator values and the policies they are (lower case; SVDLowRankDenoiseSeries --estimator too).
ESTIMATOR_POLICIES = {"exp1": "mp", "exp2": "mp-cg"}
#: Normalised residual samples a report keeps: enough for a smooth histogram, few enough to hold for many runs.
REPORT_RESIDUAL_SAMPLES = 200_000


def policy_with_estimator(policy: Optional[str], estimator: Optional[str], dashes: str = "") -> Optional[str]:
    """``policy``, or the one dwidenoise's ``estimator`` names; ValueError when both are given and differ."""
    if not estimator:
        return policy
    if policy and policy != ESTIMATOR_POLICIES[estimator.lower()]:
        raise ValueError(f"{dashes}estimator {estimator} contradicts {dashes}policy {policy}")
    return ESTIMATOR_POLICIES[estimator.lower()]


@dataclass(frozen=True)
class DenoiseOptions:
    """The denoiser's options, as :func:`local_low_rank_denoising_image_filter` takes them. None leaves the choice
    to the engine's default (svdlr/Defaults.h: Marchenko-Pastur with Cordero-Grande's estimator, the smallest cube
    of at least as many voxels as volumes, "overlap" aggregation, "auto" shrinkage)."""

    patch: Optional[Tuple[int, int, int]] = None  # along x, y, z
    stride: Optional[int] = None  # None: the engine's rule (half the patch's smallest extent); 1: dense
    patch_shape: Optional[str] = None  # "cuboid" (patch) or "sphere" (patch_radius); None: the engine's default
    patch_radius: float = 0.0  # a sphere's radius in voxels; 0: the engine's default sphere
    aggregation: Optional[str] = None
    shrinkage: Optional[str] = None
    policy: Optional[str] = None
    rank: Optional[int] = None
    energy_fraction: Optional[float] = None
    noise_sigma: Optional[float] = None
    backend: str = "auto"
    device_id: int = 0
    threads: int = 0
    vst: bool = False  # variance-stabilise the magnitude for its Rician / non-central chi noise
    noise_floor: bool = False  # return the signal with the noise floor removed
    coils: Optional[int] = None  # coils combined by root-sum-of-squares (None: the engine's default, 1)
    demean: Optional[str] = None  # "none", "all", "shells" (from the run's b-values), "echoes" (None: "none",
    noise_estimator: Optional[str] = None  # "mp" or "residual" (None: the engine's default)
    sigma_floor_correction: bool = False  # correct the magnitude's sigma map for the noise floor
    magnitude_model: Optional[bool] = None  # the automatic magnitude model (None: on; False: off, the Gaussian model)

    @classmethod
    def of(cls, values: Dict[str, Any], **chosen: Any) -> "DenoiseOptions":
        """The options among ``values`` that bear a field's name (the others left out), then ``chosen``."""
        names = {field.name for field in fields(cls)}
        return cls(**{**{name: value for name, value in values.items() if name in names}, **chosen})

    def keywords(self) -> Dict[str, Any]:
        """Keywords of :func:`local_low_rank_denoising_image_filter` for a nibabel array (x, y, z, volumes): the
        fields by their names (the filter converts the numbers and flags it takes), patch and stride renamed."""
        keywords = asdict(self)
        patch, stride = keywords.pop("patch"), keywords.pop("stride")
        keywords.update(patch_size=None if patch is None else tuple(int(p) for p in patch),
                        patch_stride=None if stride is None else int(stride), device_id=int(self.device_id),
                        threads=int(self.threads))
        return keywords

    def policy_used(self) -> str:
        """The rank policy's name: the one given, else the one a parameter implies, else the engine's default."""
        if self.policy:
            return self.policy
        if self.rank is not None:
            return "fixed"
        return "energy" if self.energy_fraction is not None else _engine.DEFAULT_DENOISE_POLICY

    def shrinkage_used(self) -> str:
        """"hard" or "frobenius": the shrinkage given, or the engine's default resolved by its rule."""
        return _engine.shrinkage_used(self.shrinkage or _engine.DEFAULT_DENOISE_SHRINKAGE, self.policy_used(),
                                      self.noise_sigma is not None)

    def magnitude_noise_used(self, negative_values: bool = False) -> str:
        """The magnitude model the run applies, as the sidecars name it ("vst+noise-floor", "none", ...): the
        engine's rule (svdlr::MagnitudeNoiseUsed) on these options, for a series with a value below 0 or none."""
        return _engine.magnitude_noise_used(self.policy_used(), self.magnitude_model is not False, vst=bool(self.vst),
                                            noise_floor=bool(self.noise_floor),
                                            sigma_floor_correction=bool(self.sigma_floor_correction),
                                            known_sigma=self.noise_sigma is not None,
                                            negative_values=negative_values)

    def shape_used(self) -> str:
        """"cuboid" or "sphere": the shape given, else "sphere" for a radius, else the engine's default."""
        if self.patch_shape:
            return self.patch_shape
        return "sphere" if self.patch_radius > 0.0 else _engine.DEFAULT_PATCH_SHAPE

    def record(self, negative_values: bool = False) -> Dict[str, Any]:
        """The options for a sidecar (None: the engine's default; the aggregation, shrinkage and magnitude model as
        used, the last for a series with a value below 0 or none)."""
        record = asdict(self)
        record["patch"] = None if self.patch is None else list(self.patch)
        record["aggregation"] = self.aggregation or _engine.DEFAULT_DENOISE_AGGREGATION
        record["patch_shape"] = self.shape_used()
        record["shrinkage"] = self.shrinkage_used()
        record["demean"] = self.demean or _engine.DEFAULT_DEMEAN
        record["noise_estimator"] = self.noise_estimator or _engine.DEFAULT_DENOISE_NOISE_ESTIMATOR
        record["magnitude_noise"] = self.magnitude_noise_used(negative_values)
        return record


@dataclass
class ReportData:
    """What a reportlet draws, taken while the arrays are in memory: one slice of each image and residual samples."""

    noisy: np.ndarray  # (x, y) of the middle axial slice of the reference volume
    denoised: np.ndarray
    sigma: np.ndarray
    rank: np.ndarray
    normalised_residuals: np.ndarray  # (noisy - denoised) / sigma where sigma > 0: N(0, 1) if sigma is right
    volume: int


@dataclass
class SeriesResult:
    """What one series' denoising found: sizes, the rank and sigma summaries where it denoised
    (:func:`_estimated_voxels`), the time taken."""

    shape: Tuple[int, ...]
    rank: Dict[str, float]
    sigma: Dict[str, float]
    seconds: float
    report: Optional[ReportData] = None
    negative_values: bool = False  # the series held a value below 0: no magnitude (MagnitudeNoiseUsed)


def _summary(values: np.ndarray) -> Dict[str, float]:
    values = values[np.isfinite(values)]
    if values.size == 0:
        return {"min": math.nan, "median": math.nan, "max": math.nan}
    return {"min": float(values.min()), "median": float(np.median(values)), "max": float(values.max())}


def _read_spatial(path: str, shape: Tuple[int, ...], name: str) -> np.ndarray:
    import nibabel  # noqa: PLC0415

    image = nibabel.load(path)
    data = np.asanyarray(image.dataobj)
    if data.ndim == 4 and data.shape[3] == 1:
        data = data[..., 0]
    if data.shape != shape:
        raise ValueError(f"{name} '{path}' has shape {data.shape}, but the series' voxel grid is {shape}")
    return data


def _nifti_header_bytes(header: Any) -> bytes:
    """What precedes the voxels in a single-file NIfTI-1 file with ``header``: the header, the extension flag and any
    extensions, padded to its vox_offset (as nibabel writes them)."""
    import io  # noqa: PLC0415

    buffer = io.BytesIO()
    header["vox_offset"] = 0  # nibabel sets the smallest offset that holds the extensions
    header.write_to(buffer)
    offset = int(header["vox_offset"])
    return buffer.getvalue().ljust(offset, b"\0")


def _write_nifti(data: np.ndarray, source: Any, dtype: Any, temporary: str) -> bool:
    """Writes ``data`` with ``source``'s header and affine to ``temporary``. A .nii.gz goes through the tools' gzip
    writer (compressed on every core, every write checked: returns True); anything else through nibabel (returns
    False: the caller checks what it wrote)."""
    import nibabel  # noqa: PLC0415

    header = source.header.copy()
    if header.endianness != nibabel.volumeutils.native_code:
        header = header.as_byteswapped(nibabel.volumeutils.native_code)
    header.set_data_dtype(dtype)
    header.set_slope_inter(1.0, 0.0)
    if data.ndim == 3:
        header.set_data_shape(data.shape)
    image = nibabel.Nifti1Image(np.asarray(data, dtype=dtype), source.affine, header)
    # Keep the source's codes: nibabel would otherwise take them from the affine it was given.
    image.set_sform(source.affine, int(source.header["sform_code"]))
    image.set_qform(source.affine, int(source.header["qform_code"]))
    if not temporary.lower().endswith(".nii.gz") or not isinstance(source, nibabel.Nifti1Image):
        nibabel.save(image, temporary)
        return False
    image.update_header()
    voxels = np.asarray(image.dataobj, dtype=dtype).ravel(order="F")  # x fastest, a view when already so
    _engine.write_gzip_file(temporary, _nifti_header_bytes(image.header), voxels)
    return True


def _report_data(noisy: np.ndarray, denoised: np.ndarray, sigma: np.ndarray, rank: np.ndarray,
                 volume: int) -> ReportData:
    z = noisy.shape[2] // 2
    positive = sigma > 0
    residuals = (noisy[positive] - denoised[positive]) / sigma[positive][:, None]  # (voxels, volumes)
    residuals = residuals.ravel()
    step = max(1, residuals.size // REPORT_RESIDUAL_SAMPLES)
    return ReportData(noisy=noisy[:, :, z, volume].copy(), denoised=denoised[:, :, z, volume].copy(),
                      sigma=sigma[:, :, z].copy(), rank=rank[:, :, z].copy(),
                      normalised_residuals=residuals[::step].astype(np.float32), volume=volume)


@dataclass
class ReadSeries:
    """A series read and checked, with its mask and known sigma map: what :func:`denoise_series` takes."""

    source: Any  # the nibabel image: header and affine for the outputs
    noisy: np.ndarray  # float32, (x, y, z, volumes); a multi-echo series' echoes stacked echo after echo
    mask: Optional[np.ndarray]
    known_sigma: Optional[np.ndarray]
    start: float  # when reading began (perf_counter), for SeriesResult.seconds
    echo_sources: Tuple[Any, ...] = ()  # the nibabel images of the echoes after the first (echo files)
    echoes: int = 1  # echoes stacked in `noisy`
    five_d: bool = False  # the input was one 5D image (x, y, z, t, echo): the output is written 5D
    bvalues: Optional[Sequence[float]] = None  # one per volume of an echo, for demean="shells"
    gfactor: Optional[np.ndarray] = None  # a g-factor map (x, y, z): the series divided by it, as NORDIC does


def _load(path: str) -> Tuple[Any, np.ndarray]:
    """(nibabel image, float32 voxels) of ``path``. The tools' reader: decompressed once, truncation and NaN/Inf
    checked, scaled as the tools scale; nibabel then reads only the header. Files it leaves to ITK (NIfTI-2,
    .hdr/.img) take nibabel's read after the same checks."""
    import nibabel  # noqa: PLC0415

    voxels = _engine.load_nifti_float32(path)
    if voxels is None:
        _engine.check_image_file(path, values=True)  # data cut short, NaN in NIfTI: what the readers would hide
    try:
        source = nibabel.load(path)
        return source, voxels.T if voxels is not None else np.asanyarray(source.dataobj, dtype=np.float32)
    except Exception as error:  # nibabel raises its own errors, zlib and EOF errors for a file that is no image
        raise OSError(f"cannot read '{path}': {str(error).strip() or type(error).__name__}") from error


def _stacked_echoes(input_path: str, source: Any, first: np.ndarray,
                    echo_paths: Sequence[str]) -> Tuple[np.ndarray, Tuple[Any, ...]]:
    """The echo files after ``input_path`` read and checked against it (shape and affine), stacked after it."""
    sources, arrays = [], [first]
    for number, path in enumerate(echo_paths, start=2):
        echo_source, data = _load(path)
        if data.shape != first.shape:
            raise ValueError(f"echo {number} '{path}' has shape {data.shape}, echo 1 '{input_path}' {first.shape}: "
                             "every echo must have the same voxel grid and volumes")
        if not np.allclose(echo_source.affine, source.affine, atol=1e-4):
            raise ValueError(f"echo {number} '{path}' has another affine than echo 1 '{input_path}': every echo "
                             "must have the same geometry")
        sources.append(echo_source)
        arrays.append(data)
    return np.concatenate(arrays, axis=3), tuple(sources)


def read_series(input_path: str, *, mask_path: Optional[str] = None, sigma_map_path: Optional[str] = None,
                options: Optional[DenoiseOptions] = None, echo_paths: Sequence[str] = (),
                bval_path: Optional[str] = None, gfactor_path: Optional[str] = None) -> ReadSeries:
    """The first step of :func:`denoise_nifti`: reads and checks the series, its mask and its known sigma map.
    A multi-echo series is one 5D file (x, y, z, t, echo) or ``input_path`` and ``echo_paths`` (the further echoes,
    in order); its echoes are stacked on the volume axis, echo after echo. ``bval_path``: the b-values, for
    ``options.demean == "shells"``."""
    options = options or DenoiseOptions()
    start = time.perf_counter()
    source, noisy = _load(input_path)
    echoes, five_d, echo_sources = 1, False, ()
    if noisy.ndim == 5 and not echo_paths:
        if noisy.shape[4] < 2:
            raise ValueError(f"'{input_path}' is a 5D image of 1 echo (shape {noisy.shape}): a multi-echo series "
                             "needs at least 2 along its fifth axis")
        echoes, five_d = int(noisy.shape[4]), True
        noisy = np.concatenate([noisy[..., e] for e in range(echoes)], axis=3)
    if noisy.ndim != 4:
        raise ValueError(f"'{input_path}' has {noisy.ndim} dimensions (shape {noisy.shape}); a 4D series (or a 5D "
                         "multi-echo series) is needed")
    if echo_paths:
        noisy, echo_sources = _stacked_echoes(input_path, source, noisy, echo_paths)
        echoes = 1 + len(echo_paths)
    spatial = noisy.shape[:3]
    mask = _read_spatial(mask_path, spatial, "the mask") if mask_path else None
    known_sigma = _read_spatial(sigma_map_path, spatial, "the sigma map") if sigma_map_path else None
    if known_sigma is not None and options.noise_sigma is not None:
        raise ValueError("give a known sigma as a number or as a map, not both")
    bvalues = None
    if (options.demean or "") == "shells":
        if bval_path is None:
            raise ValueError(f"demean 'shells' needs the b-values of '{input_path}': none were found")
        bvalues = read_bvalues(bval_path)
    gfactor = _read_spatial(gfactor_path, spatial, "the g-factor map") if gfactor_path else None
    return ReadSeries(source, noisy, mask, known_sigma, start, echo_sources, echoes, five_d, bvalues, gfactor)


#: One lock per device ("cpu", or a CUDA device number): a process denoises one series at a time on each.
_DEVICE_LOCKS: Dict[Any, threading.Lock] = {}
_DEVICE_LOCKS_GUARD = threading.Lock()


def _device_lock(options: DenoiseOptions) -> threading.Lock:
    """The lock of the device ``options`` run on. Threads that read and write series (a Dask worker's, the batch
    pipeline's) then overlap their files with one series on each device, instead of sharing a GPU's cached buffers
    or oversubscribing the cores ("auto" is counted as the device it would pick first, CUDA device 0 or the CPU)."""
    key: Any = "cpu" if options.backend == "cpu" else int(options.device_id)
    with _DEVICE_LOCKS_GUARD:
        return _DEVICE_LOCKS.setdefault(key, threading.Lock())


def denoise_series(series: ReadSeries, options: Optional[DenoiseOptions] = None, *,
                   estimate_gfactor: Optional[bool] = None) -> Tuple[np.ndarray, ...]:
    """The second step of :func:`denoise_nifti`: (denoised, sigma map, rank map), on ``options``' backend and
    device, one series at a time on each device of this process. ``estimate_gfactor``: the g-factor map estimated
    from the series (the filter's ``estimate_gfactor``)."""
    from ._denoise import local_low_rank_denoising_image_filter  # noqa: PLC0415

    # The engine takes an array's last spatial axis for its x, and a nibabel array's x is its first: the engine is
    # handed the reversed view (no copy), so that it walks the file's voxels in the order the tool does and the same
    # file gives the same output through both (under a mask, the patch lattice fills its holes in that order).
    options = options or DenoiseOptions()
    keywords = options.keywords()
    if keywords["patch_size"] is not None:
        keywords["patch_size"] = keywords["patch_size"][::-1]
    if series.known_sigma is not None:
        keywords["noise_sigma"] = np.asarray(series.known_sigma, dtype=np.float32).T
    if series.gfactor is not None:
        keywords["gfactor"] = np.asarray(series.gfactor, dtype=np.float32).T
    if estimate_gfactor is not None:
        keywords["estimate_gfactor"] = bool(estimate_gfactor)
    keywords["echoes"] = series.echoes
    if series.bvalues is not None:
        keywords["bvalues"] = list(series.bvalues) * series.echoes  # every echo has the run's b-values
    zyx = (2, 1, 0, 3)
    try:
        with _device_lock(options):
            denoised, sigma, rank = local_low_rank_denoising_image_filter(
                series.noisy.transpose(zyx), mask=None if series.mask is None else series.mask.T, volume_axis=-1,
                return_maps=True, **keywords)
    except ValueError as error:
        if getattr(error, "patch_axis", None) is None:
            raise
        # Named in the file's axis order, as the user gave the patch, not the engine's.
        axis = next(a for a in range(3) if options.patch[a] > series.noisy.shape[a])
        raise ValueError(f"svdlr: patch_size[{axis}] = {options.patch[axis]} exceeds the series' "
                         f"{series.noisy.shape[axis]} voxels along {'xyz'[axis]}") from error
    return denoised.transpose(zyx), sigma.T, rank.T


def write_series(series: ReadSeries, denoised: np.ndarray, sigma: np.ndarray, rank: np.ndarray, output_path: str, *,
                 noise_map_path: Optional[str] = None, rank_map_path: Optional[str] = None,
                 report_volume: Optional[int] = None, echo_output_paths: Sequence[str] = ()) -> SeriesResult:
    """The last step of :func:`denoise_nifti`: writes the outputs, all renamed into place once all are written.
    A multi-echo series is written in its input's shape: one 5D file, or echo 1 at ``output_path`` and the further
    echoes at ``echo_output_paths``, each with its own input's header."""
    from ._batch import _move_into_place, _remove_quietly, _temporary_for, _verify_written  # noqa: PLC0415

    noisy, source = series.noisy, series.source
    if len(echo_output_paths) != len(series.echo_sources):
        raise ValueError(f"{len(series.echo_sources) + 1} echo files read, {len(echo_output_paths) + 1} outputs given")
    per_echo = np.split(denoised, series.echoes, axis=3)
    first = np.stack(per_echo, axis=4) if series.five_d else per_echo[0]
    targets = [(first, np.float32, output_path, source), (sigma, np.float32, noise_map_path, source),
               (rank, np.uint16, rank_map_path, source)]
    targets += [(data, np.float32, path, echo_source)
                for data, path, echo_source in zip(per_echo[1:], echo_output_paths, series.echo_sources)]
    staged = []
    try:
        for data, dtype, target, header_source in targets:
            if target is None:
                continue
            temporary = _temporary_for(target)
            staged.append((temporary, target))
            if not _write_nifti(data, header_source, dtype, temporary):
                _verify_written(temporary, target)
        # Renamed once all are written, the series last: its presence means the set is complete, and a process
        # killed between the renames leaves it missing, for a resume to redo (docs/reliability.md).
        for temporary, target in reversed(staged):
            _move_into_place(temporary, target, overwrite=True)
    finally:
        for temporary, _ in staged:
            _remove_quietly(temporary)
    report = None
    if report_volume is not None:
        report = _report_data(noisy, denoised, sigma, rank, min(max(report_volume, 0), noisy.shape[3] - 1))
    estimated = _estimated_voxels(series.mask, noisy)
    return SeriesResult(shape=tuple(int(n) for n in noisy.shape), rank=_summary(rank[estimated].astype(float)),
                        sigma=_summary(sigma[estimated].astype(float)), seconds=time.perf_counter() - series.start,
                        report=report, negative_values=bool((noisy < 0).any()))


def _estimated_voxels(mask: Optional[np.ndarray], noisy: np.ndarray) -> np.ndarray:
    """The voxels a series' sigma and rank summaries describe (SeriesResult: the App's sidecars and rows, Nipype's
    sigma_median): inside the mask, where the series holds data (not 0 in every volume). A zero-filled background
    (a masked or skull-stripped series) has no noise to estimate: counted, it pulls the median towards 0, to 0 when
    it fills half the image and no mask is given."""
    holds_data = np.any(noisy != 0, axis=3)
    return holds_data if mask is None else holds_data & (mask != 0)


def denoise_nifti(
    input_path: str,
    output_path: str,
    *,
    noise_map_path: Optional[str] = None,
    rank_map_path: Optional[str] = None,
    mask_path: Optional[str] = None,
    sigma_map_path: Optional[str] = None,
    options: Optional[DenoiseOptions] = None,
    report_volume: Optional[int] = None,
    echo_paths: Sequence[str] = (),
    echo_output_paths: Sequence[str] = (),
    bval_path: Optional[str] = None,
    gfactor_path: Optional[str] = None,
    estimate_gfactor: Optional[bool] = None,
) -> SeriesResult:
    """Denoises the 4D NIfTI series ``input_path`` into ``output_path`` (float32), with the noise map (float32) and
    rank map (uint16) when their paths are given; files there are replaced. ``mask_path``: denoise where it is not
    0; ``sigma_map_path``: a known sigma per voxel (3D), in place of the estimate. ``report_volume``: keep a
    :class:`ReportData` of that volume for a reportlet. A multi-echo series (a 5D file, or ``input_path`` with
    ``echo_paths``, written to ``output_path`` and ``echo_output_paths``) is denoised jointly, its echoes stacked on
    the volume axis. ``bval_path``: the b-values, for ``options.demean == "shells"``. ``gfactor_path``: a g-factor
    map (3D; the series divided by it before the low-rank step and multiplied back, the noise map sigma x g; a single
    ``options.noise_sigma`` is then the sigma where g = 1, a ``sigma_map_path`` is refused); ``estimate_gfactor``: that
    map estimated from the series instead (docs/denoising-options.md, "An estimated g-factor map"). Its three steps
    (:func:`read_series`, :func:`denoise_series`, :func:`write_series`) are what the batch pipeline runs on its
    threads (:mod:`._denoise_batch`).

    Raises OSError for a file cut short or that is no image (naming it), ValueError for NaN or Inf in it, a series
    that is not 4D or a mask or sigma map of another grid, and the denoiser's own errors."""
    series = read_series(input_path, mask_path=mask_path, sigma_map_path=sigma_map_path, options=options,
                         echo_paths=echo_paths, bval_path=bval_path, gfactor_path=gfactor_path)
    denoised, sigma, rank = denoise_series(series, options, estimate_gfactor=estimate_gfactor)
    return write_series(series, denoised, sigma, rank, output_path, noise_map_path=noise_map_path,
                        rank_map_path=rank_map_path, report_volume=report_volume, echo_output_paths=echo_output_paths)


def read_bvalues(path: Optional[str]) -> Optional[List[float]]:
    """The b-values of an FSL .bval file, one per volume; None without a file."""
    return None if path is None else [float(v) for v in np.loadtxt(path, ndmin=1).ravel()]


def reference_volume(bvals: Optional[Sequence[float]]) -> int:
    """The volume a reportlet shows: the first of the lowest b-value (a b=0 volume) for dwi, else the first."""
    if not bvals:
        return 0
    return int(np.argmin(np.asarray(bvals, dtype=float)))
