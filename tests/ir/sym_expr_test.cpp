#include "ir/sym_expr.h"

#include <gtest/gtest.h>

#include "ir/error.h"

namespace tilefuse {
namespace {

const SymExpr N = SymExpr::symbol("N");
const SymExpr M = SymExpr::symbol("M");

TEST(SymExprTest, ConstantsFold) {
  EXPECT_EQ((SymExpr(3) + 4) * 2, SymExpr(14));
  EXPECT_EQ((SymExpr(3) - 5).value(), -2);
  EXPECT_TRUE((N - N).is_const());
  EXPECT_EQ((N - N).value(), 0);
  EXPECT_EQ(N * 0, SymExpr(0));
  EXPECT_EQ(N * 1, N);
  EXPECT_EQ(N + 0, N);
}

TEST(SymExprTest, LinearExpressionsHaveOneCanonicalForm) {
  EXPECT_EQ(2 * (N + 1), 2 * N + 2);
  EXPECT_EQ((N + 1) * 2, N * 2 + 2);
  EXPECT_EQ(N + N, 2 * N);
  EXPECT_EQ(N + M, M + N);
  EXPECT_EQ(N * M, M * N);
  EXPECT_EQ((N + M) + 1, N + (M + 1));
  EXPECT_EQ(3 * N - N - 2 * N, SymExpr(0));
  EXPECT_EQ(2 * (N + 1) - 2, 2 * N);
  EXPECT_NE(N + 1, N + 2);
  EXPECT_NE(N, M);
}

TEST(SymExprTest, CanonicalText) {
  EXPECT_EQ((2 * N + 1).to_string(), "2*N + 1");
  EXPECT_EQ((N - 1).to_string(), "N - 1");
  EXPECT_EQ((M - N).to_string(), "M - N");
  EXPECT_EQ((1 - N).to_string(), "-N + 1");
  EXPECT_EQ((-2 * N).to_string(), "-2*N");
  EXPECT_EQ(floordiv(N, 2).to_string(), "N//2");
  EXPECT_EQ(floordiv(N + 1, 2).to_string(), "(N + 1)//2");
  EXPECT_EQ(mod(N, 3).to_string(), "N%3");
  EXPECT_EQ(max(N, 4).to_string(), "max(4, N)");  // operands sorted by their text
  EXPECT_EQ(SymExpr(-3).to_string(), "-3");
}

TEST(SymExprTest, DivisionSimplifiesWhenExact) {
  EXPECT_EQ(floordiv(4 * N + 8, 4), N + 2);
  EXPECT_EQ(floordiv(6 * N, 3), 2 * N);
  EXPECT_EQ(floordiv(4 * N + 8, -4), -N - 2);
  EXPECT_EQ(floordiv(N, 1), N);
  EXPECT_EQ(floordiv(N, N), SymExpr(1));
  EXPECT_EQ(mod(4 * N, 4), SymExpr(0));
  EXPECT_EQ(mod(N, 1), SymExpr(0));
  // Not exact: must stay symbolic, (2*N + 1)//2 is N only for N >= 0 by luck of rounding.
  EXPECT_FALSE(floordiv(2 * N + 1, 2).is_const());
  EXPECT_NE(floordiv(2 * N + 1, 2), N);
  EXPECT_FALSE(mod(4 * N + 1, 4).is_const());
}

TEST(SymExprTest, FloorDivAndModFollowPythonOnNegatives) {
  // Python: -7 // 2 == -4, -7 % 2 == 1, 7 // -2 == -4, 7 % -2 == -1, -7 // -2 == 3, -7 % -2 == -1.
  EXPECT_EQ(floordiv(SymExpr(-7), 2).value(), -4);
  EXPECT_EQ(mod(SymExpr(-7), 2).value(), 1);
  EXPECT_EQ(floordiv(SymExpr(7), -2).value(), -4);
  EXPECT_EQ(mod(SymExpr(7), -2).value(), -1);
  EXPECT_EQ(floordiv(SymExpr(-7), -2).value(), 3);
  EXPECT_EQ(mod(SymExpr(-7), -2).value(), -1);
  EXPECT_EQ(floordiv(SymExpr(-8), 2).value(), -4);
  EXPECT_EQ(mod(SymExpr(-8), 2).value(), 0);
  // The same through evaluation of symbolic expressions.
  EXPECT_EQ(floordiv(N, 4).evaluate({{"N", -7}}), -2);
  EXPECT_EQ(mod(N, 4).evaluate({{"N", -7}}), 1);
  EXPECT_EQ(floordiv(N + 1, 2).evaluate({{"N", -4}}), -2);
  EXPECT_EQ(mod(N, M).evaluate({{"N", 7}, {"M", -4}}), -1);
}

TEST(SymExprTest, MaxMin) {
  EXPECT_EQ(max(N + 1, N), N + 1);
  EXPECT_EQ(max(N, N + 1), N + 1);
  EXPECT_EQ(min(N + 1, N), N);
  EXPECT_EQ(max(N - 3, N), N);
  EXPECT_EQ(max(N, N), N);
  EXPECT_EQ(max(SymExpr(3), SymExpr(-5)).value(), 3);
  EXPECT_EQ(min(SymExpr(3), SymExpr(-5)).value(), -5);
  EXPECT_EQ(max(N, M), max(M, N));
  EXPECT_EQ(min(N, M), min(M, N));
  EXPECT_NE(max(N, M), min(N, M));
  EXPECT_EQ(max(N, M).evaluate({{"N", 2}, {"M", 9}}), 9);
  EXPECT_EQ(min(N, M).evaluate({{"N", 2}, {"M", 9}}), 2);
}

TEST(SymExprTest, EvaluateWithBindings) {
  SymbolBindings b{{"N", 5}, {"M", 3}};
  EXPECT_EQ((2 * N + 1).evaluate(b), 11);
  EXPECT_EQ((N * M - 4).evaluate(b), 11);
  EXPECT_EQ(floordiv(N * M, 2).evaluate(b), 7);
  EXPECT_EQ(mod(N * M, 4).evaluate(b), 3);
  EXPECT_EQ(max(N - M, 1).evaluate(b), 2);
  EXPECT_EQ(SymExpr(42).evaluate({}), 42);
}

TEST(SymExprTest, EvaluateNamesTheUnboundSymbol) {
  try {
    (N + M).evaluate({{"N", 1}});
    FAIL() << "expected UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("'M'"), std::string::npos) << e.what();
  }
}

TEST(SymExprTest, DivisionByZero) {
  EXPECT_THROW(floordiv(N, 0), UserError);
  EXPECT_THROW(mod(N, 0), UserError);
  EXPECT_THROW(floordiv(N, M).evaluate({{"N", 4}, {"M", 0}}), UserError);
  EXPECT_THROW(mod(N, M).evaluate({{"N", 4}, {"M", 0}}), UserError);
}

TEST(SymExprTest, SubstituteResimplifies) {
  EXPECT_EQ((N * M + 1).substitute({{"N", 2}}), 2 * M + 1);
  EXPECT_EQ(floordiv(N * M, 4).substitute({{"N", 8}}), 2 * M);
  EXPECT_EQ(max(N, M).substitute({{"N", 3}, {"M", 7}}), SymExpr(7));
  EXPECT_EQ((N + 1).substitute({{"K", 3}}), N + 1);
}

TEST(SymExprTest, Symbols) {
  EXPECT_EQ((N * M + max(N, SymExpr::symbol("K"))).symbols(), (std::set<std::string>{"K", "M", "N"}));
  EXPECT_TRUE(SymExpr(4).symbols().empty());
  EXPECT_EQ(N.name(), "N");
  EXPECT_THROW(SymExpr::symbol(""), UserError);
}

TEST(SymExprTest, ParseBuildsTheSameExpressionAsOperators) {
  EXPECT_EQ(SymExpr::parse("2*(N+1)"), 2 * N + 2);
  EXPECT_EQ(SymExpr::parse(" N // 2 "), floordiv(N, 2));
  EXPECT_EQ(SymExpr::parse("N - 2*M"), N - 2 * M);
  EXPECT_EQ(SymExpr::parse("-N + 1"), 1 - N);
  EXPECT_EQ(SymExpr::parse("-(N//2)"), -floordiv(N, 2));
  EXPECT_EQ(SymExpr::parse("-N//2"), floordiv(-N, 2));
  EXPECT_EQ(SymExpr::parse("max(N, min(M, 4))"), max(N, min(M, 4)));
  EXPECT_EQ(SymExpr::parse("N%3*M"), mod(N, 3) * M);
  EXPECT_EQ(SymExpr::parse("batch_size.1"), SymExpr::symbol("batch_size.1"));
  EXPECT_EQ(SymExpr::parse("9223372036854775807").value(), INT64_MAX);
}

// Every printed form must parse back to an equal expression (and so print identically), and
// evaluate like the expression it came from.
TEST(SymExprTest, PrintParseRoundTrip) {
  const SymExpr K = SymExpr::symbol("K");
  std::vector<SymExpr> exprs = {
      N, SymExpr(0), SymExpr(-5), N + 1, N - 1, 1 - N, -N, -3 * N + M, 2 * N * M, N * M * K - 1,
      floordiv(N, 2), floordiv(N + 1, 2), floordiv(-N, 2), -floordiv(N, 2), floordiv(N, M + 1),
      floordiv(floordiv(N, 2), 3), floordiv(N, floordiv(M, 2)), mod(N + 3, 4), mod(N, 4) * M,
      -(mod(N, 4) * M), floordiv(N, 2) * M, -floordiv(N, 2) * M, max(N, 4), min(N - 1, M * 2),
      max(min(N, M), K) + 1, (N + 1) * (M + 2), floordiv(2 * N + 1, 2), mod(-N, 3),
      floordiv(N - M, K) - 2 * max(N, M),
  };
  std::vector<SymbolBindings> bindings = {{{"N", 7}, {"M", 3}, {"K", 2}},
                                          {{"N", -9}, {"M", 4}, {"K", -3}},
                                          {{"N", 0}, {"M", -1}, {"K", 5}}};
  for (const SymExpr& e : exprs) {
    SymExpr back = SymExpr::parse(e.to_string());
    EXPECT_EQ(back.to_string(), e.to_string());
    for (const auto& b : bindings) {
      bool divides_by_zero = false;
      int64_t expected = 0;
      try {
        expected = e.evaluate(b);
      } catch (const UserError&) {
        divides_by_zero = true;
      }
      if (!divides_by_zero) {
        EXPECT_EQ(back.evaluate(b), expected) << e.to_string();
      }
    }
  }
}

TEST(SymExprTest, ParseErrors) {
  for (const char* bad : {"", "N +", "(N", "max(N)", "2**N", "N $", "N)", "min(N, 2", "99999999999999999999"}) {
    EXPECT_THROW(SymExpr::parse(bad), UserError) << "'" << bad << "'";
  }
}

TEST(SymExprTest, OverflowIsAUserErrorNotAWrap) {
  const Dim huge(int64_t{1} << 62);
  EXPECT_THROW(huge * Dim(4), UserError);
  EXPECT_THROW(huge + huge, UserError);
  Dim n = Dim::symbol("N");
  EXPECT_THROW((n * huge).evaluate({{"N", 8}}), UserError);
}

}  // namespace
}  // namespace tilefuse
