// What the web server answers, on literal strings: routes and methods, Accept-Encoding, gzip, and basic auth against bcrypt hashes.
#include "export/web_content.h"

#include <zlib.h>
#include <catch2/catch.hpp>

#include "export/web_auth.h"

namespace jitterd {
namespace {

std::string gunzip(const std::string& packed) {
  z_stream stream{};
  REQUIRE(inflateInit2(&stream, 15 + 16) == Z_OK);
  std::string out(1 << 20, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(packed.data()));
  stream.avail_in = static_cast<uInt>(packed.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  CHECK(inflate(&stream, Z_FINISH) == Z_STREAM_END);
  out.resize(stream.total_out);
  inflateEnd(&stream);
  return out;
}

}  // namespace

TEST_CASE(
    "routes: GET and HEAD on /, the status JSON, the baseline and the telemetry path, 405 for other "
    "methods, 404 elsewhere",
    "[web_content]") {
  CHECK(route("GET", "/", "/metrics") == Route::status_page);
  CHECK(route("HEAD", "/", "/metrics") == Route::status_page);
  CHECK(route("GET", "/status.json", "/metrics") == Route::status_json);
  CHECK(route("HEAD", "/baseline.json", "/metrics") == Route::baseline);
  CHECK(route("POST", "/status.json", "/metrics") == Route::method_not_allowed);
  CHECK(route("DELETE", "/baseline.json", "/metrics") == Route::method_not_allowed);
  CHECK(route("GET", "/status.json/", "/metrics") == Route::not_found);
  CHECK(route("GET", "/metrics", "/metrics") == Route::metrics);
  CHECK(route("HEAD", "/metrics", "/metrics") == Route::metrics);
  CHECK(route("POST", "/metrics", "/metrics") == Route::method_not_allowed);
  CHECK(route("POST", "/", "/metrics") == Route::method_not_allowed);
  CHECK(route("OPTIONS", "/", "/metrics") == Route::method_not_allowed);
  CHECK(route("get", "/", "/metrics") == Route::method_not_allowed);
  CHECK(route("GET", "/metrics/", "/metrics") == Route::not_found);
  CHECK(route("GET", "/custom", "/metrics") == Route::not_found);
  CHECK(route("POST", "/nope", "/metrics") == Route::not_found);
  CHECK(route("GET", "/metrics", "/custom") == Route::not_found);
  CHECK(route("GET", "/custom", "/custom") == Route::metrics);
}

TEST_CASE("Accept-Encoding: gzip unless its q is 0", "[web_content]") {
  CHECK(accepts_gzip("gzip"));
  CHECK(accepts_gzip("identity, gzip"));
  CHECK(accepts_gzip("deflate, GZip;q=0.5, br"));
  CHECK(accepts_gzip(" gzip ; q=1"));
  CHECK_FALSE(accepts_gzip(""));
  CHECK_FALSE(accepts_gzip("identity"));
  CHECK_FALSE(accepts_gzip("x-gzip2"));
  CHECK_FALSE(accepts_gzip("gzip;q=0"));
  CHECK_FALSE(accepts_gzip("gzip; q=0.000"));
}

TEST_CASE("gzip gives what gunzip takes back", "[web_content]") {
  std::string text;
  for (int i = 0; i < 2000; ++i)
    text += "jitterd_sampler_gap_seconds_bucket{cpu=\"1\",le=\"" + std::to_string(i) + "\"} 42\n";
  const std::optional<std::string> packed = gzip(text);
  REQUIRE(packed);
  CHECK(packed->size() < text.size() / 4);
  CHECK(gunzip(*packed) == text);
  CHECK(gunzip(gzip("").value()).empty());
}

TEST_CASE("basic auth checks bcrypt hashes", "[web_content]") {
  // "secret" at cost 4, to keep the test fast.
  const std::string hash = "$2y$04$QpcekFas4TsDdhhhvalQ.uFCTxq338o3gdaZbumCw4Fc8DNQjbLVW";
  const BasicAuth auth({{"alice", hash}});
  CHECK(auth.enabled());
  CHECK(auth.check("alice", "secret"));
  CHECK_FALSE(auth.check("alice", "Secret"));
  CHECK_FALSE(auth.check("alice", ""));
  CHECK_FALSE(auth.check("bob", "secret"));
  CHECK_FALSE(auth.check("", "secret"));
  // Again, now from the cache of verified pairs, which must not let anything else through.
  CHECK(auth.check("alice", "secret"));
  CHECK_FALSE(auth.check("alice", "secre"));
  CHECK_FALSE(auth.check("alic", "esecret"));
  CHECK_FALSE(auth.check("bob", "secret"));
  CHECK_FALSE(BasicAuth({}).enabled());
  CHECK_FALSE(BasicAuth({}).check("alice", "secret"));
}

TEST_CASE("TLS versions become a GnuTLS priority string", "[web_content]") {
  TlsServerConfig tls;
  CHECK(tls_priorities(tls) == "NORMAL:-VERS-ALL:+VERS-TLS1.2:+VERS-TLS1.3:%SERVER_PRECEDENCE");
  tls.min_version = TlsVersion::tls10;
  tls.max_version = TlsVersion::tls11;
  tls.prefer_server_cipher_suites = false;
  CHECK(tls_priorities(tls) == "NORMAL:-VERS-ALL:+VERS-TLS1.0:+VERS-TLS1.1");
}

}  // namespace jitterd
