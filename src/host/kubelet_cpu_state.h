// SPDX-License-Identifier: Apache-2.0
// The kubelet's CPU manager checkpoint (<kubelet root>/cpu_manager_state, by default
// /var/lib/kubelet/cpu_manager_state): with the `static` policy, a Guaranteed pod's containers
// asking for whole CPUs get them exclusively, and the file lists them per pod and container;
// `defaultCpuSet` is the shared pool everything else runs on. The format (kubelet's
// cpumanager/state/checkpoint.go): {"policyName": "static", "defaultCpuSet": "0,5-7",
// "entries": {"<pod UID>": {"<container>": "1-2"}}, "checksum": 1234} (the older V1 form maps a
// container ID straight to its CPU list). The file is outside input: the parser is strict JSON of
// bounded size, depth and entry count, and every refusal names the place ("at byte 17: ...",
// "entries.<pod>.<container>: ..."). The checksum is read, not verified (the kubelet verifies
// it; its recipe hashes Go's printing of the struct). Pure parse; read_kubelet_cpu_state never
// throws. Safe from any thread.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jitterd {

struct KubeletCpuEntry {
  std::string pod;        // the pod's UID (V1 files: "" and the container ID below); printable()
  std::string container;  // the container's name; printable()
  std::vector<int> cpus;  // sorted
  bool operator==(const KubeletCpuEntry&) const = default;
};

struct KubeletCpuState {
  std::string policy;                    // "none", "static", ...; printable()
  std::vector<int> default_cpus;         // the shared pool
  std::vector<KubeletCpuEntry> entries;  // by pod, then container, as the keys sort
  bool operator==(const KubeletCpuState&) const = default;
};

// The state file's name under the kubelet's root directory.
inline constexpr const char* kKubeletCpuStateFile = "cpu_manager_state";
// A node of 256 CPUs and 110 pods writes a few kilobytes; refuse anything near a megabyte.
inline constexpr std::size_t kMaxKubeletStateBytes = 1024 * 1024;
inline constexpr std::size_t kMaxKubeletEntries = 4096;  // containers with CPUs, over every pod
// The CPUs of every entry together: the kubelet gives a CPU to one container at most, and no
// kernel has more than 8,192.
inline constexpr std::size_t kMaxKubeletEntryCpus = 8192;

// The parsed file, or std::nullopt with *error saying what and where.
std::optional<KubeletCpuState> parse_kubelet_cpu_state(std::string_view text, std::string* error);

// The CPUs given to a container exclusively: every entry's CPUs, sorted (none under `none`).
std::vector<int> kubelet_exclusive_cpus(const KubeletCpuState& state);

// What reading <kubelet_root>/cpu_manager_state found.
struct KubeletReading {
  std::string path;                      // the file, for messages
  std::optional<KubeletCpuState> state;  // nullopt: absent (no kubelet, or not the static policy yet) or refused
  std::string problem;                   // "" unless the file is there but unusable: "<path>: <why>"
};

// Reads and parses the file; an absent kubelet root or file is no problem (most machines have none).
KubeletReading read_kubelet_cpu_state(const std::string& kubelet_root);

}  // namespace jitterd
