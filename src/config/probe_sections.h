// The `probes:` and `expect:` sections of the configuration, read straight into the probes' own
// settings types (probes/probe_registry.h) with the strict reader's rules and ranges. Private to
// config/; called by ConfigReader::read for one document on one thread.
#pragma once

#include "config/config_reader.h"
#include "probes/probe_registry.h"

namespace jitterd::config_detail {

void read_probes_section(ConfigReader& reader, const Entry& section, ProbesSettings& probes);

// `expect:`: what the isolation posture should be (probes/posture_checks.h).
void read_expect_section(ConfigReader& reader, const Entry& section, PostureExpectations& expect);

}  // namespace jitterd::config_detail
