// SPDX-License-Identifier: Apache-2.0
// The BPF loader's reads of the program's maps (watch/bpf_watch.cpp's helpers): the per-CPU
// figures, counters and costs copied on the reader's CPU (a per-CPU map's lookup copies every
// CPU's slot; it sends no CPU anything), and the walks of its hash maps. Internal to the loader;
// one thread at a time.
#pragma once

#include <bpf/bpf.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "watch/bpf_watch.h"
#include "watch_bpf.h"

namespace jitterd::bpf_maps {

void read_figures(int fd, std::size_t cpus, PairedReading& reading);
std::vector<jd_cpu_counters> all_counters(int fd, std::size_t cpus);
void read_counters(int fd, std::size_t cpus, PairedReading& reading);
void read_device_irqs(int fd, PairedReading& reading);
// Each handler's runs and time, every CPU's summed by that CPU's role (JD_ROLE_*, by CPU).
std::vector<BpfProgramCosts> read_costs(int fd, const std::vector<std::uint32_t>& roles);

// Every entry of one of the program's hash maps (each holds at most kHashEntries): a walk of its
// keys, then each key's value; an entry deleted between the two is skipped.
constexpr int kHashEntries = 4096;
template <typename Key, typename Value, typename Visit>
void walk_hash(int fd, Visit visit) {
  Key key{}, next{};
  const Key* previous = nullptr;
  for (int walked = 0; walked < kHashEntries && bpf_map_get_next_key(fd, previous, &next) == 0; ++walked) {
    key = next;
    previous = &key;
    Value value{};
    if (bpf_map_lookup_elem(fd, &key, &value) == 0) visit(key, value);
  }
}

}  // namespace jitterd::bpf_maps
