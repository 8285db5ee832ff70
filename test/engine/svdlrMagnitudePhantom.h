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
// A low-SNR magnitude phantom with its noise-free signal, for the tests of the magnitude noise model
// (svdlrMagnitudeNoiseGTest.cxx, svdlrSigmaFloorCorrectionGTest.cxx).
#ifndef svdlr_MagnitudePhantom_h
#define svdlr_MagnitudePhantom_h

#include "svdlrTestMatrices.h"
#include "svdlrTestSeries.h"

#include <array>
#include <cmath>

namespace svdlr
{
namespace test
{

/** A DWI-like magnitude phantom: nu(v, t) = S0(v) exp(-b_t D(v)), S0 = snr sigma with a smooth spatial variation,
 * b_t in [0, 3], D in [0.3, 1.2]; the magnitude of nu plus complex Gaussian noise in `coils` coils (the signal in the
 * first). */
struct MagnitudePhantom
{
  Series signal, magnitude;
};

inline MagnitudePhantom
MakeMagnitudePhantom(double snr, double sigma, unsigned coils, Random & random)
{
  const std::array<std::size_t, 3> size{ 14, 14, 6 };
  const std::size_t                volumes = 30;
  MagnitudePhantom                 phantom{ EmptySeries(size, volumes), EmptySeries(size, volumes) };
  for (std::size_t v = 0; v < phantom.signal.Voxels(); ++v)
  {
    const double x = static_cast<double>(v % size[0]), y = static_cast<double>(v / size[0] % size[1]);
    const double s0 = snr * sigma * (0.8 + 0.2 * std::sin(0.4 * x + 0.3 * y));
    const double diffusivity = 0.75 + 0.45 * std::cos(0.5 * y - 0.2 * x);
    for (std::size_t t = 0; t < volumes; ++t)
    {
      const double nu = s0 * std::exp(-3.0 * static_cast<double>(t) / (volumes - 1) * diffusivity);
      const double first = nu + sigma * random.Normal(), second = sigma * random.Normal();
      double       sum = first * first + second * second;
      for (unsigned c = 1; c < coils; ++c)
      {
        const double a = sigma * random.Normal(), b = sigma * random.Normal();
        sum += a * a + b * b;
      }
      phantom.signal(v, t) = static_cast<float>(nu);
      phantom.magnitude(v, t) = static_cast<float>(std::sqrt(sum));
    }
  }
  return phantom;
}

} // namespace test
} // namespace svdlr

#endif
