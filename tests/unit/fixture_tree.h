// SPDX-License-Identifier: Apache-2.0
// Machine trees for host/ tests: readers over the committed fixtures in tests/fixtures/<machine>,
// and scratch sysfs trees built on the fly for files the fixtures do not break.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "host/host_reader.h"

#ifndef JITTERD_FIXTURES_DIR
#error "JITTERD_FIXTURES_DIR must name the tests/fixtures directory"
#endif

namespace jitterd::testing {

inline const std::filesystem::path fixtures = JITTERD_FIXTURES_DIR;

inline HostReader fixture_reader(const std::string& machine) {
  return HostReader(fixtures / machine / "sys", fixtures / machine / "proc");
}

// A scratch sysfs tree, removed when the test ends.
class ScratchTree {
 public:
  ScratchTree() {
    static int counter = 0;
    root_ = std::filesystem::temp_directory_path() /
            ("jitterd_scratch_tree_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  ~ScratchTree() { std::filesystem::remove_all(root_); }
  ScratchTree(const ScratchTree&) = delete;
  ScratchTree& operator=(const ScratchTree&) = delete;

  void write(const std::string& relative, const std::string& text) const {
    const auto path = root_ / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }
  // A CPU with a complete topology directory, its own core in package 0.
  void add_cpu(int cpu) const {
    const std::string dir = "devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    write(dir + "core_id", std::to_string(cpu) + "\n");
    write(dir + "physical_package_id", "0\n");
    write(dir + "thread_siblings_list", std::to_string(cpu) + "\n");
  }
  const std::filesystem::path& root() const { return root_; }
  HostReader reader() const { return HostReader(root_, root_ / "proc"); }

 private:
  std::filesystem::path root_;
};

}  // namespace jitterd::testing
