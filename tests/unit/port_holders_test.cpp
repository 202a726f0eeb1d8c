// SPDX-License-Identifier: Apache-2.0
// check-config's port holders: /proc/net/tcp parsed on literal text, and the holders found in a
// scratch procfs tree whose descriptors link to sockets.
#include "host/port_holders.h"

#include <catch2/catch.hpp>

#include <filesystem>

#include "fixture_tree.h"

using namespace jitterd;

namespace {
constexpr const char* kTcp =
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
    "   0: 0100007F:26FA 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 41234 1 x 100 0 "
    "0\n"
    "   1: 0100007F:26FA 0100007F:A1B2 01 00000000:00000000 00:00000000 00000000     0        0 41299 1 x 20 4\n"
    "   2: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1777 1 x 100 0\n"
    "   3: 00000000:26FA 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 0 1 x 100 0\n"
    "   4: garbage\n";
constexpr const char* kTcp6 =
    "  sl  local_address                         remote_address                        st tx_queue rx_queue tr "
    "tm->when retrnsmt   uid  timeout inode\n"
    "   0: 00000000000000000000000000000000:26FA 00000000000000000000000000000000:0000 0A 00000000:00000000 "
    "00:00000000 00000000   107        0 55555 1 x 100 0 0 10 0\n";
}  // namespace

TEST_CASE("listening sockets on a port: state LISTEN, the port in hex, a real inode", "[port_holders]") {
  CHECK(listening_inodes(kTcp, 9978) == std::vector<std::uint64_t>{41234});  // 0x26FA; not the connection
  CHECK(listening_inodes(kTcp, 22) == std::vector<std::uint64_t>{1777});
  CHECK(listening_inodes(kTcp, 80).empty());
  CHECK(listening_inodes(kTcp6, 9978) == std::vector<std::uint64_t>{55555});
  CHECK(listening_inodes("", 9978).empty());
}

TEST_CASE("port holders: the processes whose descriptors link to a listening socket", "[port_holders]") {
  const testing::ScratchTree tree;
  tree.write("proc/net/tcp", kTcp);
  tree.write("proc/net/tcp6", kTcp6);
  tree.write("proc/812/comm", "nginx\n");
  tree.write("proc/900/comm", "jitterd\n");
  tree.write("proc/self/comm", "not a pid\n");
  std::filesystem::create_directories(tree.root() / "proc/812/fd");
  std::filesystem::create_directories(tree.root() / "proc/900/fd");
  std::filesystem::create_symlink("/dev/null", tree.root() / "proc/812/fd/0");
  std::filesystem::create_symlink("socket:[41234]", tree.root() / "proc/812/fd/6");
  std::filesystem::create_symlink("socket:[55555]", tree.root() / "proc/900/fd/3");
  std::filesystem::create_symlink("socket:[41299]", tree.root() / "proc/900/fd/4");
  const std::vector<PortHolder> holders = port_holders(tree.reader(), 9978);
  CHECK(holders == std::vector<PortHolder>{{812, "nginx"}, {900, "jitterd"}});
  CHECK(port_holders(tree.reader(), 22).empty());  // listening, but no process visible holds it
  CHECK(port_holders(tree.reader(), 4242).empty());
}
