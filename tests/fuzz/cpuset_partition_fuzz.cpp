// SPDX-License-Identifier: Apache-2.0
// cpuset.cpus.partition: any text is a partition state or is refused with a reason; a state read
// back from its own written form is the same state, and a reason never holds a control character.
#include "fuzz_input.h"
#include "host/cpuset_partitions.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace jitterd;
  std::string error;
  const std::optional<PartitionState> state = parse_partition_state(fuzz::as_text(data, size), &error);
  if (!state) {
    fuzz::require(!error.empty());
    return 0;
  }
  for (char c : state->reason) fuzz::require(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f);
  fuzz::require(state->valid || state->kind != PartitionKind::member);
  std::string written(to_string(state->kind));
  if (!state->valid) written += state->reason.empty() ? " invalid" : " invalid (" + state->reason + ")";
  const std::optional<PartitionState> again = parse_partition_state(written, nullptr);
  fuzz::require(again.has_value() && again->kind == state->kind && again->valid == state->valid);
  return 0;
}
