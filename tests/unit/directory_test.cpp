// SPDX-License-Identifier: Apache-2.0
// The openat reader of small sysfs/procfs files (host/directory.h) on scratch trees: missing,
// empty, larger than its buffer, without a trailing newline; listing and subdirectories.
#include "host/directory.h"

#include <catch2/catch.hpp>

#include <string>

#include "fixture_tree.h"

using jitterd::Directory;
using jitterd::FileBuffer;
using jitterd::testing::ScratchTree;

TEST_CASE("Directory reads a small file whole, newline and all, and trims or strips on request", "[directory]") {
  ScratchTree tree;
  tree.write("cpu3/cpufreq/scaling_governor", "performance\n");
  const Directory dir(tree.root().string() + "/cpu3/cpufreq");
  REQUIRE(dir.open());
  FileBuffer buffer;
  CHECK(dir.read("scaling_governor", buffer) == std::string_view("performance\n"));
  CHECK(dir.read_stripped("scaling_governor", buffer) == std::string_view("performance"));
  CHECK(dir.read_trimmed("scaling_governor", buffer) == std::string_view("performance"));
}

TEST_CASE("Directory gives nullopt for a missing file, a directory and a directory not opened", "[directory]") {
  ScratchTree tree;
  tree.write("cpu0/online", "1\n");
  const Directory cpu(tree.root().string() + "/cpu0");
  FileBuffer buffer;
  CHECK_FALSE(cpu.read("missing", buffer));
  CHECK_FALSE(cpu.has("missing"));
  CHECK(cpu.has("online"));
  const Directory root(tree.root().string());
  CHECK_FALSE(root.read("cpu0", buffer));  // a directory is not a file
  const Directory absent(tree.root().string() + "/cpu9");
  CHECK_FALSE(absent.open());
  CHECK_FALSE(absent.read("online", buffer));
  CHECK(absent.list().empty());
  const Directory absent_child(absent, "cpufreq");
  CHECK_FALSE(absent_child.open());
  const Directory not_a_directory(cpu, "online");
  CHECK_FALSE(not_a_directory.open());
}

TEST_CASE("Directory reads an empty file as empty, not as missing, and a file without a newline as is",
          "[directory]") {
  ScratchTree tree;
  tree.write("isolated", "");
  tree.write("value", "42");
  const Directory dir(tree.root().string());
  FileBuffer buffer;
  const auto empty = dir.read("isolated", buffer);
  REQUIRE(empty);
  CHECK(empty->empty());
  CHECK(dir.read_stripped("isolated", buffer) == std::string_view(""));
  CHECK(dir.read("value", buffer) == std::string_view("42"));
  CHECK(dir.read_stripped("value", buffer) == std::string_view("42"));
  // One newline stripped, not every blank, as HostReader::read_sys does.
  tree.write("spaced", " 7 \n\n");
  CHECK(dir.read_stripped("spaced", buffer) == std::string_view(" 7 \n"));
  CHECK(dir.read_trimmed("spaced", buffer) == std::string_view("7"));
}

TEST_CASE("Directory reads a file larger than its buffer in full", "[directory]") {
  ScratchTree tree;
  for (const std::size_t size : {FileBuffer::kSize - 1, FileBuffer::kSize, FileBuffer::kSize + 1,
                                 3 * FileBuffer::kSize + 17, std::size_t{1} << 20}) {
    std::string text;
    for (std::size_t i = 0; i < size; ++i) text += static_cast<char>('a' + i % 26);
    tree.write("big", text);
    const Directory dir(tree.root().string());
    FileBuffer buffer;
    const auto read = dir.read("big", buffer);
    INFO("size " << size);
    REQUIRE(read);
    CHECK(read->size() == size);
    CHECK(*read == text);
    // The buffer serves the next small file again.
    tree.write("small", "1\n");
    CHECK(dir.read("small", buffer) == std::string_view("1\n"));
  }
}

TEST_CASE("Directory lists its entries sorted, without . and .., and opens subdirectories by relative path",
          "[directory]") {
  ScratchTree tree;
  tree.write("cpuidle/state2/name", "C6\n");
  tree.write("cpuidle/state10/name", "POLL\n");
  tree.write("cpuidle/state1/name", "C1\n");
  const Directory idle(tree.root().string() + "/cpuidle");
  CHECK(idle.list() == std::vector<std::string>{"state1", "state10", "state2"});
  CHECK(idle.list() == idle.list());  // listing does not use up the descriptor
  FileBuffer buffer;
  const Directory state(idle, "state2");
  CHECK(state.read_trimmed("name", buffer) == std::string_view("C6"));
  const Directory root(tree.root().string());
  Directory nested(root, "cpuidle/state10");
  CHECK(nested.read_trimmed("name", buffer) == std::string_view("POLL"));
  CHECK(root.read("cpuidle/state1/name", buffer) == std::string_view("C1\n"));
  const Directory moved = std::move(nested);
  CHECK(moved.open());
  CHECK_FALSE(nested.open());
}
