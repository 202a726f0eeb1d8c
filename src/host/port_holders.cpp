// SPDX-License-Identifier: Apache-2.0
#include "host/port_holders.h"

#include <unistd.h>

#include <algorithm>
#include <array>

#include "host/text.h"

namespace jitterd {
namespace {

constexpr std::string_view kListen = "0A";  // TCP_LISTEN, as include/net/tcp_states.h numbers it

// "socket:[12345]" -> 12345.
std::optional<std::uint64_t> socket_inode(std::string_view link) {
  constexpr std::string_view prefix = "socket:[";
  if (link.substr(0, prefix.size()) != prefix || link.size() < prefix.size() + 2 || link.back() != ']')
    return std::nullopt;
  return parse_number<std::uint64_t>(link.substr(prefix.size(), link.size() - prefix.size() - 1));
}

}  // namespace

std::vector<std::uint64_t> listening_inodes(std::string_view text, std::uint16_t port) {
  std::vector<std::uint64_t> inodes;
  for (std::string_view line : split_lines(text)) {
    // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...
    const std::vector<std::string_view> f = split_words(line);
    if (f.size() < 10 || f[3] != kListen) continue;
    const std::size_t colon = f[1].rfind(':');
    if (colon == std::string_view::npos) continue;
    const std::optional<std::uint16_t> local_port =
        parse_number<std::uint16_t>(f[1].substr(colon + 1), nullptr, 16);
    const std::optional<std::uint64_t> inode = parse_number<std::uint64_t>(f[9]);
    if (local_port && *local_port == port && inode && *inode != 0) inodes.push_back(*inode);
  }
  return inodes;
}

std::vector<PortHolder> port_holders(const HostReader& host, std::uint16_t port) {
  std::vector<std::uint64_t> inodes;
  for (const char* table : {"net/tcp", "net/tcp6"}) {
    if (const std::optional<std::string> text = host.read_proc(table)) {
      const std::vector<std::uint64_t> found = listening_inodes(*text, port);
      inodes.insert(inodes.end(), found.begin(), found.end());
    }
  }
  std::vector<PortHolder> holders;
  if (inodes.empty()) return holders;
  for (const std::string& pid_text : host.list_proc("")) {
    const std::optional<int> pid = parse_number<int>(pid_text);
    if (!pid) continue;
    for (const std::string& fd : host.list_proc(pid_text + "/fd")) {
      std::array<char, 64> link{};
      const std::string path = host.proc_path(pid_text + "/fd/" + fd).string();
      const ssize_t length = readlink(path.c_str(), link.data(), link.size());
      if (length <= 0) continue;
      const std::optional<std::uint64_t> inode =
          socket_inode(std::string_view(link.data(), static_cast<std::size_t>(length)));
      if (!inode || std::find(inodes.begin(), inodes.end(), *inode) == inodes.end()) continue;
      holders.push_back({*pid, std::string(trim(host.read_proc(pid_text + "/comm").value_or("")))});
      break;
    }
  }
  return holders;
}

}  // namespace jitterd
