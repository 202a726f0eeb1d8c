// SPDX-License-Identifier: Apache-2.0
// The kernel cpu-list and hex-mask formats, tested on literal strings.
#include "host/cpu_list.h"

#include <catch2/catch.hpp>

using jitterd::format_cpu_list;
using jitterd::parse_cpu_list;
using jitterd::parse_cpu_mask_hex;

namespace {

// The error parse_cpu_list gives for `text`, or "(parsed)" if it accepted it.
std::string list_error(std::string_view text) {
  std::string error;
  return parse_cpu_list(text, &error) ? "(parsed)" : error;
}

std::vector<int> parsed(std::string_view text) {
  std::string error;
  auto cpus = parse_cpu_list(text, &error);
  INFO(error);
  REQUIRE(cpus);
  return *cpus;
}

}  // namespace

TEST_CASE("parse_cpu_list reads single CPUs and ranges", "[cpu_list]") {
  CHECK(parsed("0-3,5,8-11") == std::vector<int>{0, 1, 2, 3, 5, 8, 9, 10, 11});
  CHECK(parsed("7") == std::vector<int>{7});
  CHECK(parsed("4-4") == std::vector<int>{4});
  CHECK(parsed("8191") == std::vector<int>{8191});
}

TEST_CASE("parse_cpu_list gives an empty list for empty text", "[cpu_list]") {
  CHECK(parsed("").empty());
  CHECK(parsed("\n").empty());
  CHECK(parsed("  \n").empty());
}

TEST_CASE("parse_cpu_list ignores whitespace and newlines at the ends", "[cpu_list]") {
  CHECK(parsed("0-1\n") == std::vector<int>{0, 1});
  CHECK(parsed(" \t2,4 \n") == std::vector<int>{2, 4});
}

TEST_CASE("parse_cpu_list sorts and removes duplicates", "[cpu_list]") {
  CHECK(parsed("5,0-2,1,5") == std::vector<int>{0, 1, 2, 5});
}

TEST_CASE("parse_cpu_list rejects bad entries, naming the entry and the text", "[cpu_list]") {
  CHECK(list_error("0,3-1") == "bad cpu range \"3-1\" in \"0,3-1\": end before start");
  CHECK(list_error("a") == "bad cpu number \"a\" in \"a\": not a number");
  CHECK(list_error("1,,2") == "bad cpu list \"1,,2\": empty entry between commas");
  CHECK(list_error("1,") == "bad cpu list \"1,\": empty entry between commas");
  CHECK(list_error("-1") == "bad cpu range \"-1\" in \"-1\": missing start");
  CHECK(list_error("2-") == "bad cpu range \"2-\" in \"2-\": missing end");
  CHECK(list_error("1-2-3") == "bad cpu range \"1-2-3\" in \"1-2-3\": not a number");
  CHECK(list_error("0, 1") == "bad cpu number \" 1\" in \"0, 1\": not a number");
  CHECK(list_error("0-7:2") == "bad cpu range \"0-7:2\" in \"0-7:2\": not a number");
}

TEST_CASE("parse_cpu_list rejects CPU numbers above the kernel's maximum", "[cpu_list]") {
  CHECK(list_error("0,8192") ==
        "bad cpu number \"8192\" in \"0,8192\": above 8191, the largest CPU number a kernel "
        "can have");
  CHECK(list_error("0-99999999999999999999") ==
        "bad cpu range \"0-99999999999999999999\" in \"0-99999999999999999999\": above 8191, "
        "the largest CPU number a kernel can have");
}

TEST_CASE("parse_cpu_list accepts a null error pointer", "[cpu_list]") {
  CHECK_FALSE(parse_cpu_list("3-1", nullptr));
  CHECK(parse_cpu_list("1", nullptr) == std::vector<int>{1});
}

TEST_CASE("format_cpu_list compresses runs like the kernel", "[cpu_list]") {
  CHECK(format_cpu_list({0, 1, 2, 3, 5}) == "0-3,5");
  CHECK(format_cpu_list({}) == "");
  CHECK(format_cpu_list({4}) == "4");
  CHECK(format_cpu_list({0, 1}) == "0-1");
  CHECK(format_cpu_list({7, 2, 3, 2, 6}) == "2-3,6-7");
  CHECK(jitterd::describe_cpu_list({}) == "none");
}

TEST_CASE("format_cpu_list and parse_cpu_list round-trip", "[cpu_list]") {
  for (const char* text : {"0-3,5", "0", "1,3,5,7", "0-8191", "2-3,6-7"}) {
    CHECK(format_cpu_list(parsed(text)) == text);
  }
}

TEST_CASE("parse_cpu_mask_hex reads 32-bit groups, most significant first", "[cpu_list]") {
  CHECK(parse_cpu_mask_hex("00000000,0000000f") == std::vector<int>{0, 1, 2, 3});
  CHECK(parse_cpu_mask_hex("3") == std::vector<int>{0, 1});
  CHECK(parse_cpu_mask_hex("00000001,80000000\n") == std::vector<int>{31, 32});
  CHECK(parse_cpu_mask_hex("ff") == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(parse_cpu_mask_hex("0000,00000000").empty());
}

TEST_CASE("parse_cpu_mask_hex rejects malformed masks", "[cpu_list]") {
  std::string error;
  CHECK(parse_cpu_mask_hex("00000000,xyz", &error).empty());
  CHECK(error == "bad cpu mask group \"xyz\" in \"00000000,xyz\": expected 1 to 8 hex digits");
  CHECK(parse_cpu_mask_hex("1,,2", &error).empty());
  CHECK(error == "bad cpu mask group \"\" in \"1,,2\": expected 1 to 8 hex digits");
  CHECK(parse_cpu_mask_hex("123456789", &error).empty());
  CHECK(error == "bad cpu mask group \"123456789\" in \"123456789\": expected 1 to 8 hex digits");
  CHECK(parse_cpu_mask_hex("", &error).empty());
  CHECK(error == "bad cpu mask group \"\" in \"\": expected 1 to 8 hex digits");
}

TEST_CASE("parse_cpu_mask_hex rejects bits above the kernel's maximum CPU", "[cpu_list]") {
  std::string mask = "1";
  for (int group = 0; group < 256; ++group) mask += ",00000000";  // bit 8192
  std::string error;
  CHECK(parse_cpu_mask_hex(mask, &error).empty());
  CHECK(error == "bad cpu mask \"" + mask + "\": sets cpu 8192, above 8191");
}

TEST_CASE("sorted_cpus sorts and drops repeats; has_cpu looks one up in a sorted list", "[cpu_list]") {
  CHECK(jitterd::sorted_cpus({5, 1, 3, 1, 5}) == std::vector<int>{1, 3, 5});
  CHECK(jitterd::sorted_cpus({}).empty());
  CHECK(jitterd::has_cpu({1, 3, 5}, 3));
  CHECK_FALSE(jitterd::has_cpu({1, 3, 5}, 4));
  CHECK_FALSE(jitterd::has_cpu({}, 0));
}
