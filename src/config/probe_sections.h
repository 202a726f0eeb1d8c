// SPDX-License-Identifier: Apache-2.0
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
// `application:`: the application's threads by user (`user`) and/or cgroup (`cgroup`), narrowed
// by name (`tasks`), or by name alone.
void read_application_section(ConfigReader& reader, const Entry& section, ApplicationSettings& application);
// `watch:`: the CPUs that run the application (`cpus`) and how they are read (`method`).
void read_watch_section(ConfigReader& reader, const Entry& section, WatchSettings& watch);
// `loops:`: the applications' loop probe segments (`directory`), whose are accepted (`users`),
// when a loop that stopped is down (`stale_after`).
void read_loops_section(ConfigReader& reader, const Entry& section, LoopSettings& loops);
// The application is named once: the posture probe's application_tasks (the older spelling,
// expect.application_tasks, still read) also holds application.tasks.
void name_application_once(ProbesSettings& probes);

}  // namespace jitterd::config_detail
