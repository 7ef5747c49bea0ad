// The OpenBLAS loaded on first use: its products match a plain loop in both precisions, with
// transposed operands and alpha/beta, and the first call is what loads it.
#include "reference/openblas.h"

#include <gtest/gtest.h>

#include <vector>

namespace tilefuse::reference::openblas {
namespace {

template <typename T>
std::vector<T> filled(int64_t n, int salt) {
  std::vector<T> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<T>(((i * 7 + salt * 3) % 11) / 4.0 - 1.0);
  return v;
}

// C = alpha * op(A) op(B) + beta * C, element by element, A stored [k, m] when transposed.
template <typename T>
std::vector<T> plain(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const std::vector<T>& a,
                     const std::vector<T>& b, T beta, std::vector<T> c) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      T sum = 0;
      for (int64_t p = 0; p < k; ++p) sum += (ta ? a[p * m + i] : a[i * k + p]) * (tb ? b[j * k + p] : b[p * n + j]);
      c[i * n + j] = alpha * sum + beta * c[i * n + j];
    }
  }
  return c;
}

TEST(OpenBlas, ProductsMatchAPlainLoop) {
  const int64_t m = 5, n = 7, k = 9;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      const auto ta_flag = ta ? CblasTrans : CblasNoTrans, tb_flag = tb ? CblasTrans : CblasNoTrans;
      const std::vector<float> af = filled<float>(m * k, 1), bf = filled<float>(k * n, 2);
      std::vector<float> cf = filled<float>(m * n, 3);
      const std::vector<float> want_f = plain<float>(ta, tb, m, n, k, 0.5f, af, bf, 2.0f, cf);
      sgemm(ta_flag, tb_flag, m, n, k, 0.5f, af.data(), ta ? m : k, bf.data(), tb ? k : n, 2.0f, cf.data(), n);
      const std::vector<double> ad = filled<double>(m * k, 4), bd = filled<double>(k * n, 5);
      std::vector<double> cd = filled<double>(m * n, 6);
      const std::vector<double> want_d = plain<double>(ta, tb, m, n, k, -1.5, ad, bd, 0.25, cd);
      dgemm(ta_flag, tb_flag, m, n, k, -1.5, ad.data(), ta ? m : k, bd.data(), tb ? k : n, 0.25, cd.data(), n);
      for (int64_t i = 0; i < m * n; ++i) {
        ASSERT_NEAR(cf[i], want_f[i], 1e-5) << "sgemm, transposed A " << ta << ", B " << tb << ", element " << i;
        ASSERT_NEAR(cd[i], want_d[i], 1e-12) << "dgemm, transposed A " << ta << ", B " << tb << ", element " << i;
      }
    }
  }
}

// ctest runs each test in a process of its own; run as one binary, an earlier test loads it.
TEST(OpenBlas, TheFirstCallLoadsIt) {
  if (loaded()) GTEST_SKIP() << "an earlier test in this process loaded OpenBLAS already";
  use_one_thread();
  EXPECT_TRUE(loaded());
}

}  // namespace
}  // namespace tilefuse::reference::openblas
