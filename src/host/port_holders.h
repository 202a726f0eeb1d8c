// SPDX-License-Identifier: Apache-2.0
// Who holds a TCP port: the listening sockets /proc/net/tcp and /proc/net/tcp6 list on it, and
// the processes whose descriptors point at them (/proc/PID/fd/N links to "socket:[INODE]"). For
// check-config's bind test, so that "in use" names the holder. The parser is pure (any text, any
// thread); port_holders walks procfs through the HostReader, once, from one thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "host/host_reader.h"

namespace jitterd {

// The inodes of the sockets in state LISTEN (0A) on local port `port` in the text of
// /proc/net/tcp or /proc/net/tcp6; lines that do not parse are skipped.
std::vector<std::uint64_t> listening_inodes(std::string_view proc_net_tcp, std::uint16_t port);

struct PortHolder {
  int pid = 0;
  std::string comm;  // /proc/PID/comm as read; print it through printable()
  bool operator==(const PortHolder&) const = default;
};

// The processes holding a listening socket on `port`, by pid; empty when none is visible (a
// process in another network namespace, or one this user may not look into).
std::vector<PortHolder> port_holders(const HostReader& host, std::uint16_t port);

}  // namespace jitterd
