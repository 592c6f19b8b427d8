// Clopper-Pearson bounds and the regularized incomplete beta behind them (selftest/clopper_pearson.h),
// against closed forms and exact binomial sums computed independently here.
#include <gtest/gtest.h>

#include <cmath>

#include "challenger/selftest/clopper_pearson.h"

namespace wipeproof::selftest {
namespace {

TEST(IncompleteBetaTest, ClosedForms) {
  for (double x : {0.0, 0.01, 0.2, 0.5, 0.77, 0.999, 1.0}) {
    EXPECT_NEAR(RegularizedIncompleteBeta(1, 1, x), x, 1e-12);
    EXPECT_NEAR(RegularizedIncompleteBeta(3, 1, x), std::pow(x, 3), 1e-12);
    EXPECT_NEAR(RegularizedIncompleteBeta(1, 4, x), 1 - std::pow(1 - x, 4), 1e-12);
  }
  EXPECT_NEAR(RegularizedIncompleteBeta(7, 7, 0.5), 0.5, 1e-12);
  EXPECT_NEAR(RegularizedIncompleteBeta(250, 250, 0.5), 0.5, 1e-10);
}

// P[X >= k] for X ~ Binomial(n, p) equals I_p(k, n-k+1): the identity Clopper-Pearson rests on.
TEST(IncompleteBetaTest, MatchesBinomialTails) {
  struct Case {
    uint64_t n, k;
    double p;
  };
  for (const Case& c : {Case{10, 3, 0.2}, Case{50, 25, 0.5}, Case{200, 107, 0.5575}, Case{1000, 539, 0.54},
                        Case{1000, 1, 0.001}, Case{30, 29, 0.97}}) {
    const double tail = 1 - BinomialCdf(c.k - 1, c.n, c.p);
    EXPECT_NEAR(RegularizedIncompleteBeta(static_cast<double>(c.k), static_cast<double>(c.n - c.k + 1), c.p), tail,
                1e-10)
        << "n=" << c.n << " k=" << c.k << " p=" << c.p;
  }
}

TEST(IncompleteBetaTest, InverseRoundTrips) {
  for (double p : {0.001, 0.01, 0.5, 0.99, 0.999}) {
    const double x = InverseRegularizedIncompleteBeta(12, 30, p);
    EXPECT_NEAR(RegularizedIncompleteBeta(12, 30, x), p, 1e-10);
  }
  EXPECT_EQ(InverseRegularizedIncompleteBeta(2, 3, 0), 0);
  EXPECT_EQ(InverseRegularizedIncompleteBeta(2, 3, 1), 1);
}

TEST(ClopperPearsonTest, AllOrNothingClosedForms) {
  // k = 0: U solves (1-U)^n = 0.01; k = n: L solves L^n = 0.01.
  EXPECT_NEAR(ClopperPearsonUpper(0, 10, 0.99), 1 - std::pow(0.01, 0.1), 1e-10);
  EXPECT_NEAR(ClopperPearsonUpper(0, 10, 0.99), 0.36904265551980675, 1e-10);
  EXPECT_NEAR(ClopperPearsonLower(10, 10, 0.99), 0.63095734448019325, 1e-10);
  EXPECT_NEAR(ClopperPearsonLower(200, 200, 0.99), std::pow(0.01, 1.0 / 200), 1e-10);
  EXPECT_EQ(ClopperPearsonLower(0, 10, 0.99), 0);
  EXPECT_EQ(ClopperPearsonUpper(10, 10, 0.99), 1);
}

// The bounds are where the binomial tail equals alpha.
TEST(ClopperPearsonTest, BoundsAreWhereTheTailIsAlpha) {
  struct Case {
    uint64_t k, n;
  };
  for (const Case& c : {Case{1, 10}, Case{5, 10}, Case{107, 200}, Case{539, 1000}, Case{999, 1000}, Case{3, 30}}) {
    const double upper = ClopperPearsonUpper(c.k, c.n, 0.99);
    const double lower = ClopperPearsonLower(c.k, c.n, 0.99);
    EXPECT_NEAR(BinomialCdf(c.k, c.n, upper), 0.01, 1e-9) << c.k << "/" << c.n;
    EXPECT_NEAR(1 - BinomialCdf(c.k - 1, c.n, lower), 0.01, 1e-9) << c.k << "/" << c.n;
    const double rate = static_cast<double>(c.k) / static_cast<double>(c.n);
    EXPECT_LT(lower, rate);
    EXPECT_GT(upper, rate);
  }
  // A lower confidence gives a tighter bound.
  EXPECT_LT(ClopperPearsonUpper(50, 100, 0.9), ClopperPearsonUpper(50, 100, 0.99));
}

TEST(ClopperPearsonTest, BinomialCdfSumsToOne) {
  EXPECT_NEAR(BinomialCdf(20, 20, 0.3), 1, 1e-12);
  EXPECT_NEAR(BinomialCdf(0, 5, 0.5), 1.0 / 32, 1e-15);
  EXPECT_NEAR(BinomialCdf(2, 4, 0.5), 11.0 / 16, 1e-15);
}

}  // namespace
}  // namespace wipeproof::selftest
