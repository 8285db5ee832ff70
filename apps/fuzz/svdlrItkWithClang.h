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
// Debian's ITK 5.2 generated its itk_compiler_detection.h for GCC alone: any other compiler stops at
// "#error Unsupported compiler". The fuzz targets must be built with clang (libFuzzer), so for the length of
// that one header clang presents itself as the GCC 12 that built ITK; ITK's macros then pick the GCC forms,
// which clang compiles. ITK includes the header by quotes from its own folder, so no include path can shadow it:
// the fuzz targets force-include this file first (apps/fuzz/CMakeLists.txt), and ITK's include guard then keeps
// its later #include from doing anything.
#pragma push_macro("__clang__")
#pragma push_macro("__GNUC__")
#pragma push_macro("__GNUC_MINOR__")
#pragma push_macro("__GNUC_PATCHLEVEL__")
#undef __clang__
#undef __GNUC__
#undef __GNUC_MINOR__
#undef __GNUC_PATCHLEVEL__
#define __GNUC__ 12
#define __GNUC_MINOR__ 2
#define __GNUC_PATCHLEVEL__ 0
#include <itk_compiler_detection.h>
#pragma pop_macro("__GNUC_PATCHLEVEL__")
#pragma pop_macro("__GNUC_MINOR__")
#pragma pop_macro("__GNUC__")
#pragma pop_macro("__clang__")
