// SPDX-License-Identifier: Apache-2.0
// What a client sends that the web server parses itself: the Accept-Encoding value (qvalues per
// RFC 9110) and the Authorization value of basic auth. Any text gives an answer; credentials
// never hold a NUL, and a qvalue is 0..1000 thousandths.
#include "export/web_content.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace jitterd;
  const std::string_view text = fuzz::as_text(data, size);
  static_cast<void>(accepts_gzip(text));
  if (const std::optional<int> q = parse_qvalue(text)) fuzz::require(*q >= 0 && *q <= 1000);
  if (const std::optional<BasicCredentials> credentials = parse_basic_credentials(text)) {
    fuzz::require(credentials->user.find('\0') == std::string::npos);
    fuzz::require(credentials->password.find('\0') == std::string::npos);
    fuzz::require(credentials->user.find(':') == std::string::npos);
  }
  return 0;
}
