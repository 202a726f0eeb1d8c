// SPDX-License-Identifier: Apache-2.0
// A running daemon's /status.json on arbitrary text, as `jitterd report TOPIC --from URL` reads
// one: the answer (status_document_from_answer, with an HTTP status taken from the input's size),
// then every topic (gaps and each probe), in the text tables and the JSON and CSV ones, rendered.
// Every input gives tables or a BaselineError (65 or 69) naming the URL, never another exception,
// a crash or unbounded memory.
#include "fuzz_input.h"
#include "probes/probe_registry.h"
#include "report/baseline_file.h"
#include "report/render.h"
#include "report/status_reader.h"

namespace {

void render(const jitterd::StatusTopic& topic) {
  for (const jitterd::ProbeTable& table : topic.tables) {
    static_cast<void>(jitterd::table_text(table));
    static_cast<void>(jitterd::table_csv(table));
    static_cast<void>(jitterd::json_text(jitterd::table_json(table)));
  }
}

bool named(const jitterd::BaselineError& e, const std::string& url) {
  return (e.exit_code() == jitterd::kExitBadBaseline || e.exit_code() == jitterd::kExitUnavailable) &&
         std::string_view(e.what()).rfind(url, 0) == 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace jitterd;
  const std::string url = "http://fuzz:9978/status.json";
  Json document;
  try {
    document = status_document_from_answer(size % 7 == 0 ? 404 : 200, fuzz::as_text(data, size), url);
  } catch (const BaselineError& e) {
    fuzz::require(named(e, url));
    return 0;
  }
  std::vector<std::string> topics{"gaps"};
  for (std::string_view name : probe_names()) topics.emplace_back(name);
  for (const std::string& topic : topics) {
    for (const bool display : {true, false}) {
      try {
        render(status_topic(document, url, topic, display));
      } catch (const BaselineError& e) {
        fuzz::require(named(e, url));
      }
    }
  }
  return 0;
}
