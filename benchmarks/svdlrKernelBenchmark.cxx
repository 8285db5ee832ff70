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
// svdlrKernelBenchmark: the block-size sweep of the reconstruction product R = P Q^T. Times our tiled kernel
// in several tile shapes, the naive reference kernel (one thread per output pixel) in several block shapes,
// and cuBLAS's strided-batched GEMM, with CUDA events, on the shapes of the benchmark workloads. Prints a
// markdown table (median microseconds, and the largest difference to the naive kernel's result).
#include "svdlrCudaTestHooks.h"

#include <cstdlib>
#include <iomanip>
#include <iostream>

int
main(int argc, char * argv[])
{
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 20;
  struct Shape
  {
    const char * name;
    long long    count, rows, cols, rank;
  };
  const Shape shapes[] = { { "W1 256 x 256x256, k=32", 256, 256, 256, 32 },
                           { "W5 181 x 217x181, k=20", 181, 217, 181, 20 },
                           { "W4 1 x 256x256, k=100", 1, 256, 256, 100 },
                           { "1 x 1024x1024, k=64", 1, 1024, 1024, 64 },
                           { "1 x 4096x4096, k=64", 1, 4096, 4096, 64 } };
  try
  {
    std::cout << "| shape | kernel | median us | max diff to naive |\n|---|---|---|---|\n";
    for (const Shape & shape : shapes)
    {
      for (const auto & timing : svdlr::detail::testing::SweepLowRankProductKernels<float>(
             shape.count, shape.rows, shape.cols, shape.rank, repeats, 0))
      {
        std::cout << "| " << shape.name << " | " << timing.name << " | " << std::fixed << std::setprecision(1)
                  << timing.microseconds << " | " << std::scientific << std::setprecision(1) << timing.maxDifference
                  << std::defaultfloat << " |\n";
      }
    }
  }
  catch (const std::exception & error)
  {
    std::cerr << "svdlrKernelBenchmark: " << error.what() << std::endl;
    return 1;
  }
  return 0;
}
