// SPDX-License-Identifier: Apache-2.0
// The web configuration file (exporter-toolkit format) and the web flags: any text gives a
// WebSecurity or ConfigErrors. File names in it are resolved against an empty directory, so an
// input can only name files that do not exist there or absolute paths (read with the daemon's
// limits: regular files only, 1 MiB).
#include <filesystem>

#include "config/config.h"
#include "config/web_config.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace jitterd;
  const std::string text(fuzz::as_text(data, size));
  static const std::filesystem::path empty_directory = [] {
    std::filesystem::path dir = std::filesystem::temp_directory_path() / "jitterd-fuzz-web-config";
    std::filesystem::create_directories(dir);
    return dir;
  }();
  try {
    static_cast<void>(parse_web_config(text, "web.yml", empty_directory));
  } catch (const ConfigErrors& errors) {
    fuzz::require(std::string_view(errors.what()).size() > 0);
  }
  std::string reason;
  static_cast<void>(parse_listen_address(text, &reason));
  static_cast<void>(telemetry_path_problem(text));
  static_cast<void>(is_bcrypt_hash(text));
  return 0;
}
