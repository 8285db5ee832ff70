# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""examples/python/reconstruct_mri.py runs end to end on a small image, so it cannot rot."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import REPO_ROOT

SCRIPT = REPO_ROOT / "examples" / "python" / "reconstruct_mri.py"


def small_volume(rng):
    """A smooth 'head' (x, y, z = 24, 20, 6) with noise: low rank plus a little full-rank detail."""
    z, y, x = np.meshgrid(np.linspace(-1, 1, 6), np.linspace(-1, 1, 20), np.linspace(-1, 1, 24), indexing="ij")
    head = 100.0 * np.exp(-(x**2 + y**2 + 0.5 * z**2) * 2.0)
    return (head + rng.normal(0.0, 2.0, head.shape)).astype(np.float32)


def run_example(*arguments):
    pytest.importorskip("matplotlib")
    environment = dict(os.environ, MPLBACKEND="Agg")
    completed = subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, arguments)],
        capture_output=True,
        text=True,
        timeout=300,
        env=environment,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return completed.stdout


@pytest.mark.parametrize("policy", [("--rank", 3), ("--energy-fraction", 0.95)])
def test_example_writes_image_and_figure(itk, rng, tmp_path, policy):
    image = itk.image_from_array(small_volume(rng))
    image.SetSpacing((0.9, 0.9, 3.0))
    image.SetOrigin((10.0, -5.0, 2.0))
    source = tmp_path / "small.nrrd"
    itk.imwrite(image, str(source))
    output, figure = tmp_path / "out.nrrd", tmp_path / "figure.png"

    stdout = run_example("--input", source, "--output", output, "--figure", figure, *policy, "--backend", "cpu")

    assert "relative Frobenius error" in stdout
    result = itk.imread(str(output))
    assert itk.template(result) == itk.template(itk.Image[itk.F, 3])
    assert tuple(result.GetSpacing()) == pytest.approx((0.9, 0.9, 3.0))
    assert tuple(result.GetOrigin()) == pytest.approx((10.0, -5.0, 2.0))
    with open(figure, "rb") as png:
        assert png.read(8) == b"\x89PNG\r\n\x1a\n"


def test_example_on_a_2d_image(itk, rng, tmp_path):
    source = tmp_path / "slice.nrrd"
    itk.imwrite(itk.image_from_array(small_volume(rng)[3]), str(source))
    run_example("--input", source, "--output", tmp_path / "out.nrrd", "--figure", tmp_path / "figure.png", "--rank", 2)
    assert (tmp_path / "figure.png").stat().st_size > 0
