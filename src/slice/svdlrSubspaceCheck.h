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
#ifndef svdlr_SubspaceCheck_h
#define svdlr_SubspaceCheck_h

// The a-posteriori check of the CUDA subspace solver, per matrix: does the rank-k reconstruction from the
// Rayleigh-Ritz step meet the optimality bound ||A - R||_F <= (1 + eps) ||A - A_k||_F? Plain arithmetic on
// numbers the solver already has (the trace of G, the w Ritz values, the w Ritz residual norms), so that the
// GPU runs it in a kernel and the tests run it on the host. The argument is in docs/cuda.md ("The check").
//
// With G = A^T A (or A A^T), eigenvalues lambda_1 >= ... >= lambda_n, an orthonormal block Q (n x w), its Ritz
// values theta_1 >= ... >= theta_w and Ritz vectors v_i, the reconstruction is the projection on v_1..v_k, so
//   achieved  E_R   = ||A - R||_F^2   = tr(G) - sum_{i<=k} theta_i
//   optimum   E_opt = ||A - A_k||_F^2 = tr(G) - sum_{i<=k} lambda_i = E_R - Delta,
//   Delta = sum_{i<=k} (lambda_i - theta_i) >= 0   (Cauchy interlacing: theta_i <= lambda_i).
// The bound holds iff Delta <= E_R (1 - (1 + eps)^-2). The check bounds Delta from above in two ways:
//  - outside energy: Delta <= T = tr(G) - sum_{i<=w} theta_i, the energy of A outside the block (exact,
//    no assumption: sum_{i<=k} lambda_i <= tr(G) - sum_{k<i<=w} lambda_i <= tr(G) - sum_{k<i<=w} theta_i);
//  - residuals: lambda_i - theta_i <~ rho_i^2 / (theta_i - c) (Kato-Temple, and Li & Li's quadratic bound for
//    a block-diagonal split), c the largest eigenvalue of G outside the block, estimated as
//    min(T, theta_w + rho_w) (T is a bound; theta_w + rho_w is the Krylov-Weinstein interval of the
//    block's weakest Ritz pair); counted kResidualEstimateSafety times.
// A matrix whose achieved error energy is below kFloorPerSide * n * u * tr(G) (u = 2^-53; a relative error of
// about 1e-6, the float32 output's and the Gram matrix's rounding level) passes: no solver on G does
// reliably better there, the exact one included.

#include "shared/svdlrHostDevice.h"

namespace svdlr
{
namespace detail
{

/** The project's bound on ||A - R||_F / ||A - A_k||_F - 1. */
constexpr double kOptimalityBound = 1e-4;
/** Rounding allowance on the trace differences, per unit of (n + w) * u * tr(G) (u = 2^-53). */
constexpr double kTraceRoundingPerTerm = 8.0;
/** The residual estimate counts twice: it is second-order in the residuals with an estimated c, and lay
 * within 0.85-1.25 of the true excess on MRI-like, pure-noise and slowly converged slices (float64 simulation
 * of the solver, and the GPU tests, which check estimate >= true excess on every slice). */
constexpr double kResidualEstimateSafety = 2.0;
/** Achieved error energy below kFloorPerSide * n * u * tr(G) passes: rounding level (~1e-6 of ||A||_F). */
constexpr double kFloorPerSide = 32.0;

struct SubspaceCheckOutcome
{
  double achieved{ 0 }; // E_R, rounded up
  double excess{ 0 };   // the upper estimate of Delta
  double budget{ 0 };   // what Delta may be: E_R (1 - (1 + eps)^-2)
  bool   passes{ false };
};

/** The check for one matrix.
 * trace:         tr(G);
 * ritzAscending: the w Ritz values in ascending order (as the eigen-solver returns them);
 * residuals:     (w) the Ritz residual norms ||G v_i - theta_i v_i||, descending order of theta (v_1 first);
 * n, w, k:       the Gram side, the block width, the rank (k < w). */
SVDLR_HOST_DEVICE inline SubspaceCheckOutcome
CheckSubspaceOptimality(double trace, const double * ritzAscending, const double * residuals, int n, int w, int k,
                        double bound = kOptimalityBound)
{
  constexpr double unit = 1.1102230246251565e-16; // 2^-53
  SubspaceCheckOutcome outcome;
  const double         scale = trace > 0.0 ? trace : 0.0;
  const double         rounding = kTraceRoundingPerTerm * static_cast<double>(n + w) * unit * scale;
  double               kept = 0.0;
  double               block = 0.0;
  for (int i = 0; i < w; ++i)
  {
    const double theta = ritzAscending[w - 1 - i];
    block += theta;
    kept += i < k ? theta : 0.0;
  }
  if (!(trace >= 0.0) || !(block == block) || !(kept == kept))
  {
    return outcome; // NaN or a negative trace: not checkable, so redone
  }
  const double outside = (trace - block > 0.0 ? trace - block : 0.0) + rounding;
  const double achieved = trace - kept > 0.0 ? trace - kept : 0.0;
  outcome.achieved = achieved + rounding;
  outcome.budget = outcome.achieved * (1.0 - 1.0 / ((1.0 + bound) * (1.0 + bound)));
  if (achieved <= kFloorPerSide * static_cast<double>(n) * unit * scale)
  {
    outcome.excess = 0.0;
    outcome.passes = true;
    return outcome;
  }

  // c: the top of G's spectrum outside the block (G is positive semi-definite).
  const double weakest = (ritzAscending[0] > 0.0 ? ritzAscending[0] : 0.0) + residuals[w - 1];
  const double outsideTop = weakest < outside ? weakest : outside;
  double       excess = outside;
  const double thetaK = ritzAscending[w - k];
  // A gap within the rounding of the Ritz values (a column the orthonormalisation dropped has theta = 0 up to
  // rounding) is no gap: then only the outside energy bounds the excess.
  if (thetaK - outsideTop > rounding)
  {
    double quadratic = 0.0;
    for (int i = 0; i < k; ++i)
    {
      const double theta = ritzAscending[w - 1 - i];
      quadratic += residuals[i] * residuals[i] / (theta - outsideTop);
    }
    quadratic *= kResidualEstimateSafety;
    excess = quadratic < excess ? quadratic : excess;
  }
  // A NaN residual makes the comparison false: the matrix is redone.
  outcome.excess = excess;
  outcome.passes = excess <= outcome.budget;
  return outcome;
}

} // namespace detail
} // namespace svdlr

#endif
