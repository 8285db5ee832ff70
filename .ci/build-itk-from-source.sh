#!/usr/bin/env bash
# Builds a minimal ITK 5.2.1 from Debian's source package (insighttoolkit5), then builds and tests
# this module two ways:
#   external: against the ITK build tree, through ITK's ITKModuleExternal;
#   remote:   inside the ITK source tree, as Modules/Remote/SVDLowRankReconstruction.
# The third way (against an installed ITK, e.g. libinsighttoolkit5-dev) is the normal CI build.
#
# Idempotent: re-running reuses the fetched source, the build directories and the ccache.
# Needs root (or sudo) only for apt-get (steps "deps" and "source" when something is missing).
#
# .ci/build-itk-wrapping.sh sources this file for its functions (then main is not run).
#
# Environment (all optional):
#   MODULE_SOURCE_DIR  the module's source; default: the checkout this script is in
#   WORKDIR      where everything goes (source, build dirs, ccache); default: <repo>/../itk-src
#   JOBS         parallel jobs for ninja; default: nproc
#   NICE         niceness of the builds; default: 19
#   STEPS        space-separated subset of: deps source itk external remote
#                default: "deps source itk external remote"
#   REMOTE_BUILD_ALL  1: in the remote step build all of ITK's targets, not only the module's
#   FRESH        1: delete the build directories of the selected steps first (ccache is kept)
#   ITK_DEB_VERSION  exact Debian version to fetch (e.g. 5.2.1-5+deb12u1); default: the candidate
#   ITK_MODULES  ITK modules to enable in the minimal build, on top of those the module's
#                itk-module.cmake names; default: see BASE_ITK_MODULES below
#   CMAKE_BUILD_TYPE  default: Release
#   CCACHE_DIR   default: $WORKDIR/ccache
set -euo pipefail

CHECKOUT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPO_DIR=${MODULE_SOURCE_DIR:-$CHECKOUT_DIR}
WORKDIR=${WORKDIR:-$(dirname "$CHECKOUT_DIR")/itk-src}
JOBS=${JOBS:-$(nproc)}
NICE=${NICE:-19}
STEPS=${STEPS:-deps source itk external remote}
FRESH=${FRESH:-0}
ITK_DEB_VERSION=${ITK_DEB_VERSION:-}
CMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE:-Release}
MODULE_NAME=SVDLowRankReconstruction
# Debian's CMake by default: a newer one from pip or pyenv may come first on PATH, and CMake >= 4
# refuses ITK 5.2.1's bundled projects (KWSys asks for CMake < 3.5 policies) unless told otherwise.
if [[ -z ${CMAKE:-} ]]; then
  if [[ -x /usr/bin/cmake ]]; then CMAKE=/usr/bin/cmake; else CMAKE=$(command -v cmake); fi
fi
CTEST=${CTEST:-$(dirname "$CMAKE")/ctest}
CMAKE_MAJOR=$("$CMAKE" --version | sed -n '1s/^cmake version \([0-9]*\).*/\1/p')

# What the module needs from ITK, whatever its itk-module.cmake says (the script adds those too).
BASE_ITK_MODULES="ITKCommon ITKIOImageBase ITKImageGrid ITKIONIFTI ITKIOPNG ITKIOMeta ITKIONRRD ITKGoogleTest ITKTestKernel"
ITK_MODULES=${ITK_MODULES:-$BASE_ITK_MODULES}

mkdir -p "$WORKDIR"
WORKDIR=$(cd "$WORKDIR" && pwd)
export CCACHE_DIR=${CCACHE_DIR:-$WORKDIR/ccache}
# Paths under WORKDIR are hashed relative to the build directory, so every build directory that
# sits directly in WORKDIR shares cache entries with the others.
export CCACHE_BASEDIR=$WORKDIR
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}

ITK_BUILD_DIR=${ITK_BUILD_DIR:-$WORKDIR/build-itk}
EXTERNAL_BUILD_DIR=${EXTERNAL_BUILD_DIR:-$WORKDIR/build-svdlr-external}
REMOTE_BUILD_DIR=${REMOTE_BUILD_DIR:-$WORKDIR/build-itk-remote}

declare -a TIMINGS=()

log() { printf '\n==> %s\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }
has_step() { [[ " $STEPS " == *" $1 "* ]]; }

as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"
  elif command -v sudo >/dev/null; then sudo "$@"
  else die "need root for: $*"
  fi
}

# timed LABEL COMMAND...: runs COMMAND, records its wall time under LABEL.
timed() {
  local label=$1; shift
  local start end
  start=$(date +%s)
  "$@"
  end=$(date +%s)
  TIMINGS+=("$(printf '%-40s %5ds  (%dm%02ds)' "$label" $((end - start)) $(((end - start) / 60)) $(((end - start) % 60)))")
}

ccache_zero() { ccache --zero-stats >/dev/null; }
ccache_line() {
  local label=$1
  TIMINGS+=("$(printf '%-40s %s' "  ccache ($label)" "$(ccache --print-stats | awk -F'\t' '
    $1=="direct_cache_hit"||$1=="preprocessed_cache_hit"{h+=$2} $1=="cache_miss"{m+=$2}
    END{printf "%d hits, %d misses", h, m}')")")
}

build() { nice -n "$NICE" ninja -C "$1" -j "$JOBS" "${@:2}"; }

# --- deps: tools and the system libraries the minimal ITK links against -----------------------
# Installs those of the named Debian packages that are missing (build-itk-wrapping.sh uses it too).
install_missing() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if ((${#missing[@]})); then
    log "Installing ${missing[*]}"
    as_root apt-get update
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
  fi
}

step_deps() {
  install_missing cmake ninja-build ccache g++ dpkg-dev xz-utils \
    zlib1g-dev libpng-dev libjpeg-dev libexpat1-dev libgdcm-dev libgtest-dev \
    liblapack-dev libblas-dev
}

# --- source: deb-src entries, then apt-get source (which applies Debian's patches) -------------
ensure_deb_src() {
  if [[ -n $(apt-cache showsrc insighttoolkit5 2>/dev/null | head -1) ]]; then return; fi
  log "Adding deb-src entries"
  if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
    # deb822: copy every "Types: deb" stanza as "Types: deb-src".
    awk 'BEGIN{RS=""; ORS="\n\n"} /(^|\n)Types:([^\n]* )?deb( |\n|$)/ {
           sub(/Types:[^\n]*/, "Types: deb-src"); print }' /etc/apt/sources.list.d/debian.sources \
      | as_root tee /etc/apt/sources.list.d/debian-src.sources >/dev/null
  elif [[ -f /etc/apt/sources.list ]]; then
    grep -E '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' \
      | as_root tee /etc/apt/sources.list.d/debian-src.list >/dev/null
  else
    die "no /etc/apt/sources.list nor debian.sources to derive deb-src entries from"
  fi
  as_root apt-get update
  [[ -n $(apt-cache showsrc insighttoolkit5 2>/dev/null | head -1) ]] || die "insighttoolkit5 source still unknown to apt"
}

find_itk_source() {
  ITK_SOURCE_DIR=$(find "$WORKDIR" -maxdepth 1 -type d -name 'insighttoolkit5-*' | sort -V | tail -1)
  [[ -n $ITK_SOURCE_DIR && -f $ITK_SOURCE_DIR/CMakeLists.txt ]]
}

fetch_source() { (cd "$WORKDIR" && apt-get source --only-source "$1"); }

step_source() {
  if find_itk_source; then
    log "ITK source already in $ITK_SOURCE_DIR"
    return
  fi
  ensure_deb_src
  log "Fetching insighttoolkit5 source into $WORKDIR"
  local spec=insighttoolkit5
  [[ -n $ITK_DEB_VERSION ]] && spec="insighttoolkit5=$ITK_DEB_VERSION"
  timed "fetch source (apt-get source)" fetch_source "$spec"
  find_itk_source || die "apt-get source did not unpack insighttoolkit5"
}

itk_version() {
  sed -n 's/^ *set(ITK_VERSION_\(MAJOR\|MINOR\|PATCH\) "\?\([0-9]*\)"\?)/\2/p' "$ITK_SOURCE_DIR/CMake/itkVersion.cmake" \
    | paste -sd.
}

# --- the ITK modules to enable: ITK_MODULES plus everything the module's itk-module.cmake names --
module_itk_dependencies() {
  [[ -f $REPO_DIR/itk-module.cmake ]] || return 0
  # Evaluate itk-module.cmake with a stand-in itk_module() that prints the dependency lists; in a
  # scratch copy, so a missing README.md (read for DOCUMENTATION) does not matter.
  local probe
  probe=$(mktemp -d)
  cp "$REPO_DIR/itk-module.cmake" "$probe/"
  if [[ -f $REPO_DIR/README.md ]]; then cp "$REPO_DIR/README.md" "$probe/"; else : >"$probe/README.md"; fi
  cat >"$probe/probe.cmake" <<'EOF'
function(itk_module name)
  cmake_parse_arguments(_m "EXCLUDE_FROM_DEFAULT;ENABLE_SHARED" "DESCRIPTION"
    "DEPENDS;PRIVATE_DEPENDS;COMPILE_DEPENDS;TEST_DEPENDS;FACTORY_NAMES" ${ARGN})
  set(_all ${_m_DEPENDS} ${_m_PRIVATE_DEPENDS} ${_m_COMPILE_DEPENDS} ${_m_TEST_DEPENDS})
  list(JOIN _all " " _all)
  message("ITK_MODULE_DEPENDENCIES: ${_all}")
endfunction()
include("${CMAKE_CURRENT_LIST_DIR}/itk-module.cmake")
EOF
  "$CMAKE" -P "$probe/probe.cmake" 2>&1 | sed -n 's/^ITK_MODULE_DEPENDENCIES: //p'
  rm -rf "$probe"
}

itk_module_flags() {
  local all m
  all="$ITK_MODULES $(module_itk_dependencies)"
  for m in $(tr ' ' '\n' <<<"$all" | grep -E '^ITK' | sort -u); do
    printf -- '-DModule_%s=ON\n' "$m"
  done
}

# Options shared by the plain ITK build and the ITK build that contains the module. ITKGroup_Core is ON even with
# ITK_BUILD_DEFAULT_MODULES=OFF, so it is switched off; ITKTestKernel (the tests' TEST_DEPENDS) still pulls in every
# common IO, 47 modules in all. CMake 4 refuses ITK 5.2.1's bundled KWSys without CMAKE_POLICY_VERSION_MINIMUM.
itk_common_flags() {
  cat <<EOF
-GNinja
-DCMAKE_BUILD_TYPE=$CMAKE_BUILD_TYPE
-DCMAKE_C_COMPILER_LAUNCHER=ccache
-DCMAKE_CXX_COMPILER_LAUNCHER=ccache
-DBUILD_SHARED_LIBS=ON
-DBUILD_EXAMPLES=OFF
-DITK_BUILD_DEFAULT_MODULES=OFF
-DITKGroup_Core=OFF
-DITK_WRAP_PYTHON=OFF
-DITK_FORBID_DOWNLOADS=ON
-DITK_USE_KWSTYLE=OFF
-DITK_USE_SYSTEM_ZLIB=ON
-DITK_USE_SYSTEM_PNG=ON
-DITK_USE_SYSTEM_JPEG=ON
-DITK_USE_SYSTEM_EXPAT=ON
-DITK_USE_SYSTEM_GDCM=ON
-DITK_USE_SYSTEM_GOOGLETEST=ON
EOF
  if ((CMAKE_MAJOR >= 4)); then echo -DCMAKE_POLICY_VERSION_MINIMUM=3.5; fi
  # ITK 5.2 adds -msse2 to every compile line once VXL has cached VNL_CONFIG_ENABLE_SSE2_ROUNDING
  # (ON on x86_64), i.e. from the second configure on, which rebuilds everything. Setting it from the
  # first configure keeps the flags, the build and the ccache entries stable across re-runs.
  if [[ $(uname -m) == x86_64 ]]; then echo -DVNL_CONFIG_ENABLE_SSE2_ROUNDING=ON; fi
}

# --- itk: the minimal ITK build tree (what ITK_DIR points to in the external build) ----------
step_itk() {
  find_itk_source || die "no ITK source in $WORKDIR; run the 'source' step"
  [[ $FRESH == 1 ]] && rm -rf "$ITK_BUILD_DIR"
  [[ $(itk_version) == 5.2.* ]] || printf 'warning: ITK %s, not 5.2.x: this script was written for 5.2.1\n' "$(itk_version)" >&2
  local flags
  mapfile -t flags < <(itk_common_flags; itk_module_flags)
  log "Configuring ITK $(itk_version) in $ITK_BUILD_DIR with: ${flags[*]}"
  ccache_zero
  timed "ITK configure" "$CMAKE" -S "$ITK_SOURCE_DIR" -B "$ITK_BUILD_DIR" "${flags[@]}" -DBUILD_TESTING=OFF
  timed "ITK build (-j$JOBS)" build "$ITK_BUILD_DIR"
  ccache_line "ITK build"
}

# run_module_tests DIR...: runs the tests CTest registered in each DIR (not in its subdirectories
# added elsewhere), fails if any fails or if there are none.
run_module_tests() {
  local dir total=0 n
  for dir in "$@"; do
    n=$(cd "$dir" && "$CTEST" -N | sed -n 's/^Total Tests: //p')
    if [[ ${n:-0} -gt 0 ]]; then
      (cd "$dir" && "$CTEST" --output-on-failure -j "$JOBS")
    fi
    total=$((total + ${n:-0}))
  done
  [[ $total -gt 0 ]] || die "no tests registered in: $*"
  TIMINGS+=("$(printf '%-40s %s' "  tests" "$total run, all passed")")
}

# --- external: the module against the ITK build tree (ITKModuleExternal) ----------------------
# With BUILD_TESTING=ON, ITKModuleExternal turns on ITK_USE_KWSTYLE and ITK_USE_CLANG_FORMAT, which
# download KWStyle and clang-format at build time; we switch them off (and forbid downloads).
step_external() {
  [[ -f $ITK_BUILD_DIR/ITKConfig.cmake ]] || die "no ITK build tree in $ITK_BUILD_DIR; run the 'itk' step"
  [[ $FRESH == 1 ]] && rm -rf "$EXTERNAL_BUILD_DIR"
  log "Building $MODULE_NAME against the ITK build tree $ITK_BUILD_DIR"
  ccache_zero
  timed "external: configure" "$CMAKE" -S "$REPO_DIR" -B "$EXTERNAL_BUILD_DIR" -GNinja \
    -DCMAKE_BUILD_TYPE="$CMAKE_BUILD_TYPE" \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DITK_DIR="$ITK_BUILD_DIR" -DSVDLR_USE_CUDA=OFF -DBUILD_TESTING=ON \
    -DITK_USE_KWSTYLE=OFF -DITK_USE_CLANG_FORMAT=OFF -DITK_FORBID_DOWNLOADS=ON
  timed "external: build (-j$JOBS)" build "$EXTERNAL_BUILD_DIR"
  ccache_line "external build"
  timed "external: ctest" run_module_tests "$EXTERNAL_BUILD_DIR"
}

# --- remote: the module inside the ITK source tree, built as part of ITK ----------------------
# A copy, not a symlink: ITK finds modules with file(GLOB_RECURSE), which does not follow
# symlinked directories. The copy holds what git would commit (tracked + untracked, not ignored).
copy_module_into_itk() {
  local dest=$ITK_SOURCE_DIR/Modules/Remote/$MODULE_NAME
  rm -rf "$dest"
  mkdir -p "$dest"
  if git -C "$REPO_DIR" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$REPO_DIR" && git ls-files -z --cached --others --exclude-standard) \
      | (cd "$REPO_DIR" && xargs -0 -r tar -cf - --no-recursion --ignore-failed-read) \
      | tar -xf - -C "$dest"
  else
    tar -C "$REPO_DIR" --exclude=.git --exclude='./build*' -cf - . | tar -xf - -C "$dest"
  fi
}

step_remote() {
  find_itk_source || die "no ITK source in $WORKDIR; run the 'source' step"
  [[ $FRESH == 1 ]] && rm -rf "$REMOTE_BUILD_DIR"
  copy_module_into_itk
  local flags
  # Only Module_<ours> is requested: ITK enables its dependencies, and with
  # ITK_BUILD_DEFAULT_MODULES=OFF it builds the tests of requested modules only, i.e. not ITK's own.
  mapfile -t flags < <(itk_common_flags)
  log "Configuring ITK with Modules/Remote/$MODULE_NAME in $REMOTE_BUILD_DIR"
  ccache_zero
  timed "remote: configure ITK + module" "$CMAKE" -S "$ITK_SOURCE_DIR" -B "$REMOTE_BUILD_DIR" "${flags[@]}" \
    -DModule_$MODULE_NAME=ON -DBUILD_TESTING=ON -DSVDLR_USE_CUDA=OFF
  # The module's directories only: BUILD_TESTING=ON also registers the tests of the bundled VXL,
  # MetaIO and KWIML (about 180 more files to compile), which "all" would build. REMOTE_BUILD_ALL=1
  # builds everything.
  local module_bin=Modules/Remote/$MODULE_NAME targets=()
  [[ ${REMOTE_BUILD_ALL:-0} == 1 ]] || targets=("$module_bin/all" "$module_bin/test/all")
  timed "remote: build ITK + module (-j$JOBS)" build "$REMOTE_BUILD_DIR" "${targets[@]}"
  ccache_line "remote build"
  timed "remote: ctest" run_module_tests "$REMOTE_BUILD_DIR/$module_bin" "$REMOTE_BUILD_DIR/$module_bin/test"
}

main() {
  local total_start=$SECONDS
  LOAD_AT_START=$(cut -d' ' -f1-3 /proc/loadavg)
  has_step deps && step_deps
  has_step source && step_source
  has_step itk && step_itk
  has_step external && step_external
  has_step remote && step_remote
  log "Summary (JOBS=$JOBS on $(nproc) cores, WORKDIR=$WORKDIR, steps: $STEPS, $("$CMAKE" --version | head -1))"
  printf 'load average at start: %s, at end: %s\n' "$LOAD_AT_START" "$(cut -d' ' -f1-3 /proc/loadavg)"
  printf '%s\n' "${TIMINGS[@]}"
  printf '%-40s %5ds\n' "total" $((SECONDS - total_start))
  printf 'ITK build tree (ITK_DIR): %s\n' "$ITK_BUILD_DIR"
}

# Sourced (by .ci/build-itk-wrapping.sh): define the functions only.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  main "$@"
fi
