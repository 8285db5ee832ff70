#!/usr/bin/env bash
# Builds ITK 5.2.1 (Debian's source package) with its Python wrapping (WrapITK), then the module's
# wrapping two ways, and runs the module's WrapITK pytest suite (wrapping/test) with that ITK's Python:
#   external: the module against the wrapped ITK build tree (ITKModuleExternal writes its Python
#             modules into that tree's Wrapping/, so `import itk` there finds the filter);
#   remote:   the module copied into ITK's Modules/Remote, built as part of a second wrapped ITK tree.
# The fetching of the source, the module list and the shared ITK options come from
# .ci/build-itk-from-source.sh (sourced). Only what the filter and its tests need is built:
# modules ITKCommon ITKIOImageBase ITKIOMeta ITKBridgeNumPy (+ their
# dependencies), pixel types unsigned char, short, unsigned short, float, double, dimensions 2 and 3,
# no vector, covariant vector, complex, RGB or RGBA images (ITK 5.2.1 needs a one-word patch for that, below).
#
# Tools (installed by the "deps" and "venv" steps):
#   castxml  Debian's 0.5.1 (ITK_USE_SYSTEM_CASTXML), called through .ci/castxml-gcc12.sh, which
#            adds -fno-sized-deallocation to its GCC probe (ITK 5.3 does that itself; 5.2 does not).
#   swig     PyPI's swig==4.0.2 in the venv (ITK_USE_SYSTEM_SWIG): the version ITK 5.2.1 pins.
#   python   Debian's python3 in a venv with numpy<1.24 (ITK 5.2.1's Python still uses np.bool).
#
# Environment (all optional; those of build-itk-from-source.sh apply too: WORKDIR, JOBS, NICE, FRESH):
#   WRAP_STEPS  subset of: deps source venv itk external test remote remote-test
#               default: "deps source venv itk external test"; "remote" builds a second wrapped ITK
#               (as long as the first, castxml and swig are not cached), so it is opt-in
#   SWIG        a swig executable to use instead of the venv's (e.g. /usr/bin/swig, Debian's 4.1.0)
#   PYTEST_ARGS extra arguments for pytest
set -euo pipefail

WRAP_SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WRAP_STEPS=${WRAP_STEPS:-deps source venv itk external test}
# The non-wrapped trees of build-itk-from-source.sh stay untouched; these are separate.
export ITK_BUILD_DIR=${ITK_WRAP_BUILD_DIR:-}
export EXTERNAL_BUILD_DIR=${WRAP_EXTERNAL_BUILD_DIR:-}
export REMOTE_BUILD_DIR=${WRAP_REMOTE_BUILD_DIR:-}
[[ -n $ITK_BUILD_DIR ]] || unset ITK_BUILD_DIR
[[ -n $EXTERNAL_BUILD_DIR ]] || unset EXTERNAL_BUILD_DIR
[[ -n $REMOTE_BUILD_DIR ]] || unset REMOTE_BUILD_DIR
WORKDIR_GUESS=${WORKDIR:-$(dirname "$(cd "$WRAP_SCRIPT_DIR/.." && pwd)")/itk-src}
: "${ITK_BUILD_DIR:=$WORKDIR_GUESS/build-itk-wrap}"
: "${EXTERNAL_BUILD_DIR:=$WORKDIR_GUESS/build-svdlr-wrap-external}"
: "${REMOTE_BUILD_DIR:=$WORKDIR_GUESS/build-itk-wrap-remote}"
export ITK_BUILD_DIR EXTERNAL_BUILD_DIR REMOTE_BUILD_DIR

# shellcheck source=build-itk-from-source.sh
source "$WRAP_SCRIPT_DIR/build-itk-from-source.sh"

VENV_DIR=${VENV_DIR:-$WORKDIR/venv-wrapitk}
# ITKIOMeta, not ITKIONIFTI: NIfTI needs ITKTransform, whose wrapping (with ITKStatistics') is about 40 % of the
# whole, more than this 2-core machine can afford; tests read Colin27 through MetaImage files (wrapping/test).
# No ITKImageFilterBase either: the tests chain the filter with ITKCommon's ExtractImageFilter.
WRAP_ITK_MODULES="ITKCommon ITKIOImageBase ITKIOMeta ITKBridgeNumPy"
# The optimization of the SWIG glue, and no LTO (see .ci/wrapitk-project-include.cmake); empty: ITK's own
# (-O3 and LTO).
WRAP_CXX_FLAGS_RELEASE=${WRAP_CXX_FLAGS_RELEASE--O0 -DNDEBUG}

has_wrap_step() { [[ " $WRAP_STEPS " == *" $1 "* ]]; }

step_wrap_deps() {
  step_deps
  install_missing castxml python3-dev python3-venv
}

step_venv() {
  if [[ ! -x $VENV_DIR/bin/python ]]; then
    log "Creating $VENV_DIR"
    /usr/bin/python3 -m venv "$VENV_DIR"
  fi
  "$VENV_DIR/bin/pip" install --quiet 'numpy<1.24' 'swig==4.0.2' pytest nibabel
}

# The castxml wrapper (and the include file of wrap_flags) are copied next to the build trees, so that those do
# not depend on this checkout; with install -C (only when their content changed), so that a build tree kept
# between CI runs (.ci/run) sees no newer file than the ones it was built with.
# castxml_wrapper [-cxx17]: the path of the wrapper, which parses as C++14 (ITK 5.2's standard) or, by its -cxx17
# name, as C++17 (the module's: svdlr/LocalDenoise.h needs it).
castxml_wrapper() {
  mkdir -p "$WORKDIR/bin"
  install -C -m 755 "$WRAP_SCRIPT_DIR/castxml-gcc12.sh" "$WORKDIR/bin/castxml-gcc12${1:-}"
  echo "$WORKDIR/bin/castxml-gcc12${1:-}"
}

# The tools, for ITK and for a module built against it (ITK's build tree does not hand them on: without them, the
# module's configure would try to download castxml and swig).
# wrap_tool_flags [-cxx17]: for ITK (C++14), or for the module (-cxx17).
wrap_tool_flags() {
  cat <<EOF
-DPython3_EXECUTABLE=$VENV_DIR/bin/python
-DITK_USE_SYSTEM_CASTXML=ON
-DCASTXML_EXECUTABLE=$(castxml_wrapper "${1:-}")
-DITK_USE_SYSTEM_SWIG=ON
-DSWIG_EXECUTABLE=${SWIG:-$VENV_DIR/bin/swig}
EOF
}

# wrap_flags [-cxx17]: everything ITK is configured with for wrapping.
wrap_flags() {
  local m
  wrap_tool_flags "${1:-}"
  cat <<EOF
-DITK_WRAP_PYTHON=ON
-DITK_WRAP_IMAGE_DIMS=2;3
-DITK_WRAP_unsigned_char=ON
-DITK_WRAP_signed_short=ON
-DITK_WRAP_unsigned_short=ON
-DITK_WRAP_float=ON
-DITK_WRAP_double=ON
-DITK_WRAP_signed_char=OFF
-DITK_WRAP_unsigned_long_long=OFF
-DITK_WRAP_signed_long_long=OFF
-DITK_WRAP_vector_float=OFF
-DITK_WRAP_vector_double=OFF
-DITK_WRAP_covariant_vector_float=OFF
-DITK_WRAP_covariant_vector_double=OFF
-DITK_WRAP_complex_float=OFF
-DITK_WRAP_complex_double=OFF
-DITK_WRAP_rgb_unsigned_char=OFF
-DITK_WRAP_rgb_unsigned_short=OFF
-DITK_WRAP_rgba_unsigned_char=OFF
-DITK_WRAP_rgba_unsigned_short=OFF
EOF
  for m in $WRAP_ITK_MODULES; do printf -- '-DModule_%s=ON\n' "$m"; done
  if [[ -n $WRAP_CXX_FLAGS_RELEASE ]]; then
    install -C -m 644 "$WRAP_SCRIPT_DIR/wrapitk-project-include.cmake" "$WORKDIR/bin/wrapitk-project-include.cmake"
    printf -- '-DCMAKE_PROJECT_WrapITK_INCLUDE=%s\n' "$WORKDIR/bin/wrapitk-project-include.cmake"
    printf -- '-DSVDLR_WRAP_CXX_FLAGS_RELEASE=%s\n' "$WRAP_CXX_FLAGS_RELEASE"
  fi
}

# Two fixes to ITK 5.2.1's wrapping, for a build with few modules and types (idempotent; they only affect wrapped
# builds):
# - itkImageDuplicator.wrap passes the list of wrapped vector types unquoted to string(REGEX MATCHALL), which fails
#   to configure when no vector type is wrapped: quoted.
# - ITK 5.2.1's ITKCommon wrapping wraps itk::MeshRegion, whose header and code are in ITKMesh (and ITKMesh needs
# ITKTransform and ITKStatistics): without ITKMesh, castxml stops at the missing header. The class is wrapped
# only when ITKMesh is enabled.
patch_itk_wrapping_source() {
  local duplicator=$ITK_SOURCE_DIR/Modules/Core/Common/wrapping/itkImageDuplicator.wrap
  if grep -q 'VectorTypes ${WRAP_ITK_VECTOR})' "$duplicator"; then
    log "Patching $duplicator: quoted vector type list"
    sed -i 's|VectorTypes ${WRAP_ITK_VECTOR})|VectorTypes "${WRAP_ITK_VECTOR}")|' "$duplicator"
  fi
  local wrap=$ITK_SOURCE_DIR/Modules/Core/Common/wrapping/ITKCommonBase.wrap
  if grep -q '^itk_wrap_simple_class("itk::MeshRegion")$' "$wrap"; then
    log "Patching $wrap: itk::MeshRegion only with ITKMesh"
    sed -i 's|^itk_wrap_simple_class("itk::MeshRegion")$|if(ITKMesh_ENABLED) # svdlr: ITKMesh holds itkMeshRegion.h\n  itk_wrap_simple_class("itk::MeshRegion")\nendif()|' "$wrap"
  fi
}

step_wrap_itk() {
  find_itk_source || die "no ITK source in $WORKDIR; run the 'source' step"
  patch_itk_wrapping_source
  [[ $FRESH == 1 ]] && rm -rf "$ITK_BUILD_DIR"
  local flags
  mapfile -t flags < <(itk_common_flags; wrap_flags)
  log "Configuring ITK $(itk_version) with Python wrapping in $ITK_BUILD_DIR with: ${flags[*]}"
  ccache_zero
  timed "wrapped ITK: configure" "$CMAKE" -S "$ITK_SOURCE_DIR" -B "$ITK_BUILD_DIR" "${flags[@]}" -DBUILD_TESTING=OFF
  timed "wrapped ITK: build (-j$JOBS)" build "$ITK_BUILD_DIR"
  ccache_line "wrapped ITK build"
}

step_wrap_external() {
  [[ -f $ITK_BUILD_DIR/ITKConfig.cmake ]] || die "no wrapped ITK build tree in $ITK_BUILD_DIR; run the 'itk' step"
  [[ $FRESH == 1 ]] && rm -rf "$EXTERNAL_BUILD_DIR"
  log "Building $MODULE_NAME with wrapping against $ITK_BUILD_DIR"
  local tools
  mapfile -t tools < <(wrap_tool_flags -cxx17)
  ccache_zero
  timed "wrapped external: configure" "$CMAKE" -S "$REPO_DIR" -B "$EXTERNAL_BUILD_DIR" -GNinja "${tools[@]}" \
    -DCMAKE_BUILD_TYPE="$CMAKE_BUILD_TYPE" \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DITK_DIR="$ITK_BUILD_DIR" -DSVDLR_USE_CUDA=OFF -DBUILD_TESTING=OFF \
    -DITK_USE_KWSTYLE=OFF -DITK_USE_CLANG_FORMAT=OFF -DITK_FORBID_DOWNLOADS=ON
  timed "wrapped external: build (-j$JOBS)" build "$EXTERNAL_BUILD_DIR"
  ccache_line "wrapped external build"
}

# run_wrap_tests ITK_TREE: the module's WrapITK tests with the tree's `itk` package.
run_wrap_tests() {
  local tree=$1 py_dir=$1/Wrapping/Generators/Python
  [[ -d $py_dir/itk ]] || die "no itk package in $py_dir"
  PYTHONPATH=$py_dir${PYTHONPATH:+:$PYTHONPATH} SVDLR_ITK_BUILD_DIR=$tree \
    "$VENV_DIR/bin/python" -m pytest -q "$REPO_DIR/wrapping/test" ${PYTEST_ARGS:-}
}

step_wrap_remote() {
  find_itk_source || die "no ITK source in $WORKDIR; run the 'source' step"
  patch_itk_wrapping_source
  [[ $FRESH == 1 ]] && rm -rf "$REMOTE_BUILD_DIR"
  copy_module_into_itk
  local flags
  # One castxml for ITK and the module here: C++17, which the module's headers need (ITK 5.2's parse too).
  mapfile -t flags < <(itk_common_flags; wrap_flags -cxx17)
  log "Configuring wrapped ITK with Modules/Remote/$MODULE_NAME in $REMOTE_BUILD_DIR"
  ccache_zero
  timed "wrapped remote: configure" "$CMAKE" -S "$ITK_SOURCE_DIR" -B "$REMOTE_BUILD_DIR" "${flags[@]}" \
    -DModule_$MODULE_NAME=ON -DBUILD_TESTING=OFF -DSVDLR_USE_CUDA=OFF
  timed "wrapped remote: build (-j$JOBS)" build "$REMOTE_BUILD_DIR"
  ccache_line "wrapped remote build"
}

wrap_main() {
  local total_start=$SECONDS
  LOAD_AT_START=$(cut -d' ' -f1-3 /proc/loadavg)
  has_wrap_step deps && step_wrap_deps
  has_wrap_step source && step_source
  has_wrap_step venv && step_venv
  has_wrap_step itk && step_wrap_itk
  has_wrap_step external && step_wrap_external
  has_wrap_step test && timed "pytest wrapping/test (external)" run_wrap_tests "$ITK_BUILD_DIR"
  has_wrap_step remote && step_wrap_remote
  has_wrap_step remote-test && timed "pytest wrapping/test (remote)" run_wrap_tests "$REMOTE_BUILD_DIR"
  log "Summary (JOBS=$JOBS on $(nproc) cores, WORKDIR=$WORKDIR, steps: $WRAP_STEPS)"
  printf 'load average at start: %s, at end: %s\n' "$LOAD_AT_START" "$(cut -d' ' -f1-3 /proc/loadavg)"
  printf '%s\n' "${TIMINGS[@]}"
  printf '%-40s %5ds\n' "total" $((SECONDS - total_start))
  printf 'wrapped ITK build tree: %s\n' "$ITK_BUILD_DIR"
}

wrap_main "$@"
