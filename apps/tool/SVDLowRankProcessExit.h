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
#ifndef SVDLowRankProcessExit_h
#define SVDLowRankProcessExit_h

// How the tools end once their work is done: every output is committed and the summary printed, so what remains is
// teardown the operating system does anyway, and faster: unmapping GiBs of buffers, destroying each GPU's CUDA
// context, freeing pinned host memory, ITK's and the libraries' static destructors. On the GPU machine that teardown
// was measured in the process's wall time (benchmarks/device.sh denoise-batch: the process against the tool's own
// clock). As LLVM's linker does, the tools skip it: they flush their streams and end with std::_Exit.
//
// SVDLR_FULL_EXIT=1 keeps the full teardown (for leak checkers: valgrind, compute-sanitizer's leak check), and builds
// with a sanitizer always keep it, since their checks run at exit.

namespace svdlr_tools
{

/** Ends the process with `code` after flushing std::cout, std::cerr and C's streams, skipping the teardown (see
 * above); returns `code` instead where the full teardown is kept, for main to return it. */
int
EndProcess(int code);

} // namespace svdlr_tools

#endif
