// Exact (Clopper-Pearson) binomial confidence bounds, for the adversary selftest's statistical
// acceptance (docs/results/security-results.md): a measured detection rate k/n passes when its one-sided
// upper bound at the stated confidence is at least the theoretical rate.
//
// Definitions (Clopper & Pearson 1934), for k successes in n trials and alpha = 1 - confidence:
//   one-sided lower bound L = Beta^-1(alpha; k, n-k+1)    (0 when k = 0)
//   one-sided upper bound U = Beta^-1(1-alpha; k+1, n-k)  (1 when k = n)
// equivalently P[X >= k | n, L] = alpha and P[X <= k | n, U] = alpha for X ~ Binomial(n, p).
// The regularized incomplete beta function I_x(a, b) is evaluated with its continued fraction
// (modified Lentz; Numerical Recipes 3rd ed. §6.4 "betacf"), using the symmetry
// I_x(a,b) = 1 - I_{1-x}(b,a) where the fraction converges slowly; its inverse by bisection on x
// (I_x is increasing in x), to ~1e-12.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

namespace wipeproof::selftest {

// I_x(a, b) for a, b > 0 and x in [0, 1]; 0 at x = 0 and 1 at x = 1.
double RegularizedIncompleteBeta(double a, double b, double x);

// The x in [0, 1] with I_x(a, b) = p, for p in [0, 1].
double InverseRegularizedIncompleteBeta(double a, double b, double p);

// One-sided bounds at `confidence` (e.g. 0.99). REQUIRES: n >= 1, k <= n, confidence in (0, 1).
double ClopperPearsonLower(uint64_t k, uint64_t n, double confidence);
double ClopperPearsonUpper(uint64_t k, uint64_t n, double confidence);

// P[X <= k] for X ~ Binomial(n, p), summed term by term (for tests and cross-checks).
double BinomialCdf(uint64_t k, uint64_t n, double p);

}  // namespace wipeproof::selftest
