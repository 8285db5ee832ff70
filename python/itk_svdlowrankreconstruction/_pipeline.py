# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""The filter as a stage of an ITK pipeline, for users of the ``itk`` wheels: an ``itk.PyImageFilter`` whose
GenerateData calls :func:`svd_low_rank_reconstruction_image_filter`.

The ``itk`` wheels cannot load a WrapITK build of the C++ filter (they link ITK statically, see docs/python.md),
but they ship ``itk.PyImageFilter``: an ``itk.ImageToImageFilter`` whose data generation is a Python callable.
The stage takes part in the pipeline like any ITK filter (``New(reader)``, ``SetInput``, ``Update`` of a filter
downstream, re-execution when it or its input is modified); it asks for and produces whole images (no streaming).
"""

from __future__ import annotations

import inspect
from typing import Any

from ._filter import check_parameters, svd_low_rank_reconstruction_image_filter, warn_noise_rank, with_policy

# The keywords of svd_low_rank_reconstruction_image_filter that make sense for a pipeline stage (not the ones
# that choose what comes back: return_details, output_pixel_type, which the stage's types fix): check_parameters'.
_PARAMETERS = tuple(inspect.signature(check_parameters).parameters)


def svd_low_rank_reconstruction_pipeline_filter(
    input_image_type: Any, output_image_type: Any = None, *, input: Any = None, **parameters: Any
) -> Any:
    """A new ``itk.PyImageFilter[input_image_type, output_image_type]`` that reconstructs its input.

    Parameters
    ----------
    input_image_type : itk.Image type
        ``itk.Image[P, D]`` with P one of itk.UC, itk.SS, itk.US, itk.F, itk.D and D 2 or 3.
    output_image_type : itk.Image type, optional
        ``itk.Image[itk.F, D]`` (the default, as the C++ filter) or ``itk.Image[itk.D, D]``.
    input : itk.Image or an ITK filter, optional
        Connected as the stage's input (a filter's output is taken), as ITK's ``New(input)`` does.
    **parameters
        The keywords of :func:`svd_low_rank_reconstruction_image_filter` (policy, rank, energy_fraction,
        noise_sigma, noise_rank (deprecated), slice_dimension, backend, solver, device_id, max_matrices_per_batch,
        threads), checked here.

    The stage keeps them in ``stage.svdlr_parameters`` (a dict; call ``stage.Modified()`` after changing it) and,
    after each run, the :class:`ReconstructionDetails` in ``stage.svdlr_details``.

    An error during the run reaches the caller of ``Update()`` as ITK reports errors of Python callables: a
    ``RuntimeError`` ("There was an error executing the CommandCallable"), the Python traceback printed before it;
    the original exception is kept in ``stage.svdlr_error``.

    The stage is never freed (its data generation refers to it, through ITK's C++ side, where Python's garbage
    collector cannot break the cycle): call ``stage.GetOutput().ReleaseData()`` when its output is no longer needed.
    """
    import itk

    unknown = sorted(set(parameters) - set(_PARAMETERS))
    if unknown:
        raise TypeError(f"svdlr: unknown parameter(s) {', '.join(unknown)}; expected some of {', '.join(_PARAMETERS)}")
    pixel, dimension = itk.template(input_image_type)[1]
    if output_image_type is None:
        output_image_type = itk.Image[itk.F, dimension]
    output_pixel, output_dimension = itk.template(output_image_type)[1]
    if output_dimension != dimension or output_pixel not in (itk.F, itk.D):
        raise TypeError(
            f"svdlr: the output image type must be itk.Image[itk.F, {dimension}] or itk.Image[itk.D, {dimension}]"
        )
    warn_noise_rank(parameters.get("noise_rank"))
    check_parameters(**parameters)

    stage = itk.PyImageFilter[input_image_type, output_image_type].New()
    stage.svdlr_parameters = dict(parameters)
    stage.svdlr_details = None
    stage.svdlr_error = None

    # itk.PyImageFilter (itk 5.4) hands its callable the Python object that its own Update() last registered
    # (_SetSelf), without holding a reference to it: when a filter downstream runs the pipeline, that object is
    # unset (a crash) or stale. The stage registers itself now, and the reference this closure holds keeps it valid:
    # the stage (and its output image) lives as long as the pipeline, but also afterwards, since the cycle runs
    # through ITK's C++ side, which Python's collector cannot see.
    def generate_data(_handed: Any) -> None:
        stage.svdlr_error = None
        try:
            parameters = with_policy(stage.svdlr_parameters, warn=False)  # it warned when the stage was built
            result, details = svd_low_rank_reconstruction_image_filter(
                stage.GetInput(), output_pixel_type=output_pixel, return_details=True, **parameters
            )
        except Exception as error:
            stage.svdlr_error = error
            raise
        stage.GetOutput().Graft(result)
        stage.svdlr_details = details

    stage.SetPyGenerateData(generate_data)
    stage._SetSelf(stage)
    if input is not None:
        stage.SetInput(input.GetOutput() if hasattr(input, "GetOutput") else input)
    return stage

