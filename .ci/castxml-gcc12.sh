#!/usr/bin/env bash
# CASTXML_EXECUTABLE for ITK 5.2 wrapping with Debian's castxml 0.5.1 and GCC 12.
#
# castxml asks the compiler named between "--castxml-cc-gnu (" and ")" for its predefined macros and
# enables sized deallocation when that compiler does (GCC 12 in C++14 mode). libstdc++ 12 then calls
# __builtin_operator_delete with a size, which castxml's clang rejects ("selects non-usual
# deallocation function"). ITK 5.3 adds -fno-sized-deallocation to CMAKE_CXX_FLAGS; here it goes
# into the compiler probe only, so the C++ objects keep their flags (and their ccache entries).
# A flag placed after ")" does not help: it must change what the probe reports.
#
# ITK 5.2 also probes with -std=c++11 (CMAKE_CXX11_STANDARD_COMPILE_OPTION), while it compiles as C++14;
# headers that use C++14 (std::conditional_t, ...) then do not parse. The probe gets -std=c++14, or -std=c++17 when
# this script is called by a name that ends in -cxx17 (the module's headers are C++17; ITK's are parsed as C++14,
# the standard ITK 5.2 is built with).
set -euo pipefail
castxml=${SVDLR_CASTXML:-castxml}
standard=14
[[ $(basename "$0") == *-cxx17 ]] && standard=17
args=()
in_probe=0
for a in "$@"; do
  if [[ $a == --castxml-cc-gnu ]]; then
    in_probe=1
  elif [[ $in_probe == 1 && $a == ")" ]]; then
    args+=(-fno-sized-deallocation)
    in_probe=0
  elif [[ $in_probe == 1 && $a == -std=c++11 ]]; then
    a=-std=c++$standard
  elif [[ $in_probe == 1 && $a == -std=gnu++11 ]]; then
    a=-std=gnu++$standard
  fi
  args+=("$a")
done
exec "$castxml" "${args[@]}"
