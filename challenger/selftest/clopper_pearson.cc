#include "challenger/selftest/clopper_pearson.h"

#include <cmath>

namespace wipeproof::selftest {

namespace {

// Continued fraction of I_x(a,b) (Numerical Recipes betacf, modified Lentz); converges quickly for
// x < (a + 1) / (a + b + 2).
double BetaContinuedFraction(double a, double b, double x) {
  constexpr int kMaxIterations = 10'000;
  constexpr double kEpsilon = 1e-15;
  constexpr double kTiny = 1e-300;
  const double qab = a + b, qap = a + 1, qam = a - 1;
  double c = 1, d = 1 - qab * x / qap;
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= kMaxIterations; ++m) {
    const int m2 = 2 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double del = d * c;
    h *= del;
    if (std::fabs(del - 1) < kEpsilon) break;
  }
  return h;
}

}  // namespace

double RegularizedIncompleteBeta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  // log of x^a (1-x)^b / B(a,b)
  const double front =
      std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * BetaContinuedFraction(a, b, x) / a;
  return 1 - front * BetaContinuedFraction(b, a, 1 - x) / b;
}

double InverseRegularizedIncompleteBeta(double a, double b, double p) {
  if (p <= 0) return 0;
  if (p >= 1) return 1;
  double lo = 0, hi = 1;
  for (int i = 0; i < 200 && hi - lo > 1e-13; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (RegularizedIncompleteBeta(a, b, mid) < p) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return 0.5 * (lo + hi);
}

double ClopperPearsonLower(uint64_t k, uint64_t n, double confidence) {
  if (k == 0) return 0;
  return InverseRegularizedIncompleteBeta(static_cast<double>(k), static_cast<double>(n - k + 1), 1 - confidence);
}

double ClopperPearsonUpper(uint64_t k, uint64_t n, double confidence) {
  if (k >= n) return 1;
  return InverseRegularizedIncompleteBeta(static_cast<double>(k + 1), static_cast<double>(n - k), confidence);
}

double BinomialCdf(uint64_t k, uint64_t n, double p) {
  double sum = 0;
  for (uint64_t i = 0; i <= k && i <= n; ++i) {
    const double log_term = std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) +
                            (i == 0 ? 0 : i * std::log(p)) + (n - i == 0 ? 0 : (n - i) * std::log1p(-p));
    sum += std::exp(log_term);
  }
  return sum;
}

}  // namespace wipeproof::selftest
