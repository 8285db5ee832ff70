#!/usr/bin/env bash
# The Python tests: builds the extension with pip (scikit-build-core + nanobind) into a virtual
# environment (Debian's system Python refuses global pip installs) and runs pytest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${SVDLR_VENV:-$root/.venv}
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
python=$venv/bin/python
# Debian 12's venv pip (23.0) predates options that scikit-build-core builds rely on.
"$python" -m pip install -q --disable-pip-version-check --upgrade pip
"$python" -m pip install -q --disable-pip-version-check -r "$root/python/requirements-test.txt"

build_args=()
if [ -z "${CUDACXX:-}" ] && [ -x /usr/local/cuda/bin/nvcc ]; then
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi
if [ -n "${SVDLR_USE_CUDA:-}" ]; then
  build_args+=("--config-settings=cmake.define.SVDLR_USE_CUDA=${SVDLR_USE_CUDA}")
fi
build_args+=("--config-settings=cmake.define.CMAKE_CUDA_ARCHITECTURES=${SVDLR_CUDA_ARCHITECTURES:-90}")
# The package was distributed as itk-svdlowrankreconstruction before (docs/python.md, "The name"): an environment
# that still has it would hold two distributions owning the same files.
if "$python" -m pip show -q itk-svdlowrankreconstruction >/dev/null 2>&1; then
  "$python" -m pip uninstall -q -y itk-svdlowrankreconstruction
fi
"$python" -m pip install -q --disable-pip-version-check --no-build-isolation "${build_args[@]}" "$root"

# pytest must not import the package from the source tree: run it from the tests' directory.
cd "$root/python/tests"
"$python" -m pytest -q -p no:cacheprovider .
