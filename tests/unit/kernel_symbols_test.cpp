// SPDX-License-Identifier: Apache-2.0
#include "host/kernel_symbols.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "fixture_tree.h"

using jitterd::KernelSymbols;

TEST_CASE("KernelSymbols: a timer's function named by the text symbol at or before its address", "[kallsyms]") {
  const KernelSymbols symbols = KernelSymbols::parse(
      "ffffffff81000000 T _stext\n"
      "ffffffff8141e4b0 t hrtimer_wakeup\n"
      "ffffffff814332e0 t tick_nohz_handler\n"
      "ffffffff82a00000 D jiffies\n"                  // data: not a function
      "ffffffffc0a01000 t mlx5_timer\t[mlx5_core]\n"  // a module's
      "garbage line\n"
      "zzzz t not_hex\n");
  CHECK(symbols.size() == 4);
  CHECK(symbols.why_not().empty());
  CHECK(symbols.name_of(0xffffffff8141e4b0) == "hrtimer_wakeup");
  CHECK(symbols.name_of(0xffffffff814332f0) == "tick_nohz_handler+0x10");
  CHECK(symbols.name_of(0xffffffffc0a01000) == "mlx5_timer");
  CHECK(symbols.name_of(0x1000) == "0x1000");  // before every symbol
}

TEST_CASE("KernelSymbols: addresses hidden by kptr_restrict, or no file, say why", "[kallsyms]") {
  const KernelSymbols hidden =
      KernelSymbols::parse("0000000000000000 T _stext\n0000000000000000 t hrtimer_wakeup\n");
  CHECK(hidden.size() == 0);
  CHECK(hidden.why_not() ==
        "/proc/kallsyms shows every address as 0 (kernel.kptr_restrict hides them from this user)");
  CHECK(hidden.name_of(0xffffffff8141e4b0) == "0xffffffff8141e4b0");
  const jitterd::testing::ScratchTree tree;
  const KernelSymbols missing = KernelSymbols::read(tree.reader());
  CHECK(missing.why_not() == (tree.root() / "proc" / "kallsyms").string() + " is not readable");
}

TEST_CASE("KernelSymbols: an offset only within a function's reach, and exact starts told apart", "[kallsyms]") {
  const KernelSymbols symbols = KernelSymbols::parse(
      "ffffffff81000000 T _stext\n"
      "ffffffff8141e4b0 t hrtimer_wakeup\n"
      "ffffffff81600000 t far_after\n"
      "ffffffffc0a01000 t mlx5_timer\t[mlx5_core]\n");
  CHECK(symbols.name_of(0xffffffff8141e4b0 + 0xffff) == "hrtimer_wakeup+0xffff");
  // 1.8 MB past hrtimer_wakeup's start: no function is that long.
  CHECK(symbols.name_of(0xffffffff815f0000) == "0xffffffff815f0000");
  // Past the last symbol (a module loaded since the read, say): unknown, whatever the distance.
  CHECK(symbols.name_of(0xffffffffc0a01010) == "0xffffffffc0a01010");
  CHECK(symbols.starts_at(0xffffffff8141e4b0));
  CHECK_FALSE(symbols.starts_at(0xffffffff8141e4b1));
  CHECK_FALSE(symbols.starts_at(0x1000));
  CHECK_FALSE(symbols.starts_at(0xffffffffffffffff));
}

TEST_CASE("KernelSymbols: read line by line from the procfs root, text symbols only", "[kallsyms]") {
  const jitterd::testing::ScratchTree tree;
  std::string text;
  for (int i = 0; i < 1000; ++i) {
    char line[64];
    std::snprintf(line, sizeof line, "ffffffff81%06x %c sym%d\n", i * 16, i % 2 ? 't' : 'D', i);
    text += line;
  }
  tree.write("proc/kallsyms", text);
  const KernelSymbols symbols = KernelSymbols::read(tree.reader());
  CHECK(symbols.size() == 500);
  CHECK(symbols.name_of(0xffffffff81000010) == "sym1");
  CHECK(symbols.why_not().empty());
}
