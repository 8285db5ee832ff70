# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""The CUDA wheel as a user on a GPU machine runs it (device.sh stage `wheel`): a fresh process imports the package,
denoises a NIfTI series with the default backend ("auto") twice, and reports which CUDA libraries it mapped and from
where, the first call's cost (the CUDA backend's load and the device's start) against the second's, and the CPU
backend on the same file.

    wheel_on_gpu.py IN MASK OUT_PREFIX
"""

from __future__ import annotations

import sys
import time


def mapped_cuda_libraries() -> list[str]:
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "/" in line}
    return sorted(p for p in paths if any(lib in p for lib in ("libcuda", "libcublas", "libcusolver", "libcudart",
                                                                 "libsvdlr_cuda")))


def main(noisy: str, mask: str, prefix: str) -> int:
    t0 = time.perf_counter()
    import itk_svdlowrankreconstruction as svdlr
    from itk_svdlowrankreconstruction._nifti_series import DenoiseOptions, denoise_nifti
    print(f"import: {time.perf_counter() - t0:.3f} s; cuda_backend_built {svdlr.cuda_backend_built()}; "
          f"CUDA libraries mapped after the import: {mapped_cuda_libraries() or 'none'}")
    t0 = time.perf_counter()
    usable = svdlr.cuda_device_usable(0)
    print(f"cuda_device_usable(0): {usable} ({time.perf_counter() - t0:.3f} s)"
          + ("" if usable else f"; reason: {svdlr.cuda_device_unusable_reason(0)}"))
    for run in ("first", "second"):
        t0 = time.perf_counter()
        denoise_nifti(noisy, f"{prefix}_gpu.nii", mask_path=mask, noise_map_path=f"{prefix}_gpu_sigma.nii")
        print(f"denoise_nifti, backend auto, {run} call: {time.perf_counter() - t0:.3f} s")
    print("CUDA libraries mapped: " + "; ".join(mapped_cuda_libraries()))
    t0 = time.perf_counter()
    denoise_nifti(noisy, f"{prefix}_cpu.nii", mask_path=mask, options=DenoiseOptions(backend="cpu"))
    print(f"denoise_nifti, backend cpu: {time.perf_counter() - t0:.3f} s")
    return 0 if usable else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
