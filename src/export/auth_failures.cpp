// SPDX-License-Identifier: Apache-2.0
#include "export/auth_failures.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>

namespace jitterd {

std::string client_address_key(const sockaddr* address) {
  if (address == nullptr) return "";
  if (address->sa_family == AF_INET) {
    sockaddr_in v4{};
    std::memcpy(&v4, address, sizeof v4);
    return "4:" + std::string(reinterpret_cast<const char*>(&v4.sin_addr), 4);
  }
  if (address->sa_family != AF_INET6) return "";
  sockaddr_in6 v6{};
  std::memcpy(&v6, address, sizeof v6);
  const auto* bytes = reinterpret_cast<const char*>(&v6.sin6_addr);
  if (IN6_IS_ADDR_V4MAPPED(&v6.sin6_addr)) return "4:" + std::string(bytes + 12, 4);
  return "6:" + std::string(bytes, 8);
}

FailureMemory::FailureMemory(std::size_t addresses, std::size_t per_address, Clock::duration keep)
    : address_limit_(std::max<std::size_t>(1, addresses)),
      per_address_(std::max<std::size_t>(1, per_address)),
      keep_(keep) {}

bool FailureMemory::remembers(const std::string& address, const std::string& digest, Clock::time_point now) {
  const auto found = by_address_.find(address);
  if (found == by_address_.end()) return false;
  auto& failures = found->second.failures;
  const auto hit = std::find_if(failures.begin(), failures.end(),
                                [&](const Failure& f) { return f.until > now && f.digest == digest; });
  if (hit == failures.end()) return false;
  Failure seen = std::move(*hit);
  failures.erase(hit);
  seen.until = now + keep_;
  failures.push_back(std::move(seen));
  found->second.last = now;
  return true;
}

void FailureMemory::add(const std::string& address, const std::string& digest, Clock::time_point now) {
  if (by_address_.find(address) == by_address_.end()) make_room(now);
  Address& entry = by_address_[address];
  entry.last = now;
  auto& failures = entry.failures;
  failures.erase(std::remove_if(failures.begin(), failures.end(),
                                [&](const Failure& f) { return f.until <= now || f.digest == digest; }),
                 failures.end());
  failures.push_back({digest, now + keep_});
  while (failures.size() > per_address_) failures.pop_front();
}

std::size_t FailureMemory::size() const {
  std::size_t total = 0;
  for (const auto& [address, entry] : by_address_) total += entry.failures.size();
  return total;
}

// Before a new address is added: drop the addresses whose failures have all expired, then, if
// still full, the one that failed least recently. Linear, on a path that costs a bcrypt anyway.
void FailureMemory::make_room(Clock::time_point now) {
  if (by_address_.size() < address_limit_) return;
  for (auto it = by_address_.begin(); it != by_address_.end();) {
    const bool expired = std::all_of(it->second.failures.begin(), it->second.failures.end(),
                                     [&](const Failure& f) { return f.until <= now; });
    it = expired ? by_address_.erase(it) : std::next(it);
  }
  if (by_address_.size() < address_limit_) return;
  const auto oldest = std::min_element(by_address_.begin(), by_address_.end(),
                                       [](const auto& a, const auto& b) { return a.second.last < b.second.last; });
  by_address_.erase(oldest);
}

}  // namespace jitterd
