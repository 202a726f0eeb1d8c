// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "cli/progress.h"

using namespace jitterd;
using namespace std::chrono_literals;

namespace {

// Everything written to a temporary file so far.
std::string written(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string text;
  for (int c; (c = std::fgetc(f)) != EOF;) text += static_cast<char>(c);
  return text;
}

}  // namespace

TEST_CASE("a progress line says what is done and how far along", "[progress]") {
  CHECK(progress_line("sampling cpus 1-3", 12.7, 60.0) == "sampling cpus 1-3: 12/60 s");
  CHECK(progress_line("sampling cpus 1", 0.4, 0.5) == "sampling cpus 1: 0/0.5 s");
  CHECK(progress_line("sampling cpus 1", 75.0, 60.0) == "sampling cpus 1: 60/60 s");  // a late stop
  CHECK(progress_line("probe c2c (4/4)", 3.9, std::nullopt) == "probe c2c (4/4): 3 s");
  CHECK(progress_line("probe c2c (4/4)", -0.1, std::nullopt) == "probe c2c (4/4): 0 s");
}

TEST_CASE("progress writes nothing when it is off (standard error not a terminal)", "[progress]") {
  std::FILE* f = std::tmpfile();
  REQUIRE(f);
  {
    Progress progress(false, f);
    CHECK_FALSE(progress.enabled());
    progress.step("sampling cpus 1", 1s);
    progress.step("probe clock (1/1)");
    progress.clear();
  }
  CHECK(written(f).empty());
  std::fclose(f);
}

TEST_CASE("progress draws one line in place and erases it", "[progress][concurrency]") {
  std::FILE* f = std::tmpfile();
  REQUIRE(f);
  {
    Progress progress(true, f, std::chrono::hours(1));  // no redraw by its thread during the test
    progress.step("sampling cpus 1", 60s);
    progress.step("probe clock (1/1)");
    progress.clear();
    progress.clear();  // nothing shown: nothing to erase
  }
  CHECK(written(f) == "\rsampling cpus 1: 0/60 s\x1b[K\rprobe clock (1/1): 0 s\x1b[K\r\x1b[K");
  std::fclose(f);
}
