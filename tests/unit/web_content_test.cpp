// SPDX-License-Identifier: Apache-2.0
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

TEST_CASE("qvalues as RFC 9110 writes them, in thousandths", "[web_content]") {
  CHECK(parse_qvalue("0") == 0);
  CHECK(parse_qvalue("0.") == 0);
  CHECK(parse_qvalue("0.5") == 500);
  CHECK(parse_qvalue("0.05") == 50);
  CHECK(parse_qvalue("0.001") == 1);
  CHECK(parse_qvalue("0.000") == 0);
  CHECK(parse_qvalue("1") == 1000);
  CHECK(parse_qvalue("1.") == 1000);
  CHECK(parse_qvalue("1.000") == 1000);
  for (const char* bad : {"", "abc", ".5", "0.1234", "1.5", "1.001", "2", "-0", " 1", "1 ", "0,5", "0.5x", "01",
                          "1e0", "0..5", "+1", "q=1"}) {
    INFO(bad);
    CHECK_FALSE(parse_qvalue(bad));
  }
}

TEST_CASE("Accept-Encoding: gzip when listed with q above 0, or covered by *", "[web_content]") {
  CHECK(accepts_gzip("gzip"));
  CHECK(accepts_gzip("identity, gzip"));
  CHECK(accepts_gzip("deflate, GZip;q=0.5, br"));
  CHECK(accepts_gzip(" gzip ; q=1"));
  CHECK(accepts_gzip("gzip;Q=0.001"));
  CHECK(accepts_gzip("x-gzip"));
  CHECK(accepts_gzip("*"));
  CHECK(accepts_gzip("br, *;q=0.1"));
  CHECK(accepts_gzip(",, gzip ,"));
  CHECK_FALSE(accepts_gzip(""));
  CHECK_FALSE(accepts_gzip("identity"));
  CHECK_FALSE(accepts_gzip("x-gzip2"));
  CHECK_FALSE(accepts_gzip("gzip;q=0"));
  CHECK_FALSE(accepts_gzip("gzip; q=0.000"));
  CHECK_FALSE(accepts_gzip("gzip;q=0."));
  // A malformed weight is no acceptance (it used to count as one).
  CHECK_FALSE(accepts_gzip("gzip;q=abc"));
  CHECK_FALSE(accepts_gzip("gzip;q=.5"));
  CHECK_FALSE(accepts_gzip("gzip;q=1.5"));
  CHECK_FALSE(accepts_gzip("gzip;q="));
  CHECK_FALSE(accepts_gzip("gzip;q = 1"));
  CHECK_FALSE(accepts_gzip("gzip;level=9"));
  CHECK_FALSE(accepts_gzip("gzip;q=1;q=1"));
  CHECK_FALSE(accepts_gzip("gzip;"));
  // gzip named says it all, whatever * says; its first mention counts.
  CHECK_FALSE(accepts_gzip("gzip;q=0, *"));
  CHECK(accepts_gzip("*;q=0, gzip"));
  CHECK_FALSE(accepts_gzip("*;q=0"));
  CHECK_FALSE(accepts_gzip("*;q=abc"));
  CHECK_FALSE(accepts_gzip("gzip;q=0, gzip"));
}

TEST_CASE("basic auth credentials: the scheme, base64, the first colon, no NUL", "[web_content]") {
  const auto alice = parse_basic_credentials("Basic YWxpY2U6c2VjcmV0");  // alice:secret
  REQUIRE(alice);
  CHECK(alice->user == "alice");
  CHECK(alice->password == "secret");
  const auto spaced = parse_basic_credentials("  basic   YWxpY2U6c2VjcmV0 ");
  REQUIRE(spaced);
  CHECK(spaced->password == "secret");
  const auto colons = parse_basic_credentials("BASIC YTpiOmM=");  // a:b:c
  REQUIRE(colons);
  CHECK(colons->user == "a");
  CHECK(colons->password == "b:c");
  const auto empty = parse_basic_credentials("Basic Og==");  // ":"
  REQUIRE(empty);
  CHECK(empty->user.empty());
  CHECK(empty->password.empty());
  const auto two = parse_basic_credentials("Basic YTpiYw==");  // a:bc (one padding character less)
  REQUIRE(two);
  CHECK(two->password == "bc");
  const auto one = parse_basic_credentials("Basic YTpiY2Q=");  // a:bcd
  REQUIRE(one);
  CHECK(one->password == "bcd");
  // A NUL anywhere is refused, never cut: "secret\0x" must not pass as "secret".
  CHECK_FALSE(parse_basic_credentials("Basic YWxpY2U6c2VjcmV0AHg="));  // alice:secret\0x
  CHECK_FALSE(parse_basic_credentials("Basic YWxpY2UAOnNlY3JldA=="));  // alice\0:secret
  for (const char* bad :
       {"", "Basic", "Basic ", "Bearer YWxpY2U6c2VjcmV0", "BasicYWxpY2U6c2VjcmV0",
        "Basic YWxpY2U6c2VjcmV0=", "Basic YWxpY2U6c2VjcmV", "Basic YWxpY2Uc2VjcmV0", "Basic YWxp Y2U6c2VjcmV0",
        "Basic YWxpY2U6c2Vjc!V0", "Basic ====", "Basic YQ==YQ==", "Basic YWxpY2U="}) {
    INFO(bad);
    CHECK_FALSE(parse_basic_credentials(bad));
  }
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
  // A NUL never reaches crypt_r, which would stop reading there.
  CHECK_FALSE(auth.check("alice", std::string("secret\0x", 8)));
  // The caches' names for pairs: the same pair, the same digest; never the password itself.
  CHECK(auth.digest("alice", "secret") == auth.digest("alice", "secret"));
  CHECK(auth.digest("ab", "c") != auth.digest("a", "bc"));
  CHECK(auth.digest("alice", "secret").find("secret") == std::string::npos);
  CHECK(auth.verified(auth.digest("alice", "secret")));
  CHECK_FALSE(auth.verified(auth.digest("alice", "Secret")));
}

TEST_CASE("an unknown user is checked against a configured user's hash, whatever the costs", "[web_content]") {
  // Two users of different costs (4 and 5): unknown names are refused, and each costs a bcrypt
  // at one of the two costs; which one is fixed per name, so repeating a name tells nothing new.
  const BasicAuth auth({{"alice", "$2y$04$QpcekFas4TsDdhhhvalQ.uFCTxq338o3gdaZbumCw4Fc8DNQjbLVW"},
                        {"bob", "$2y$05$QpcekFas4TsDdhhhvalQ.uKkN7mTwWPwOOF3SrLsTgivGE.2sxcAq"}});
  for (const char* name : {"carol", "mallory", "", "alice ", "Alice"}) {
    INFO(name);
    CHECK_FALSE(auth.check(name, "secret"));
  }
  CHECK(auth.check("alice", "secret"));
  CHECK(auth.cost_for("alice") == 4);
  CHECK(auth.cost_for("bob") == 5);
  std::map<unsigned, int> costs;
  for (int i = 0; i < 200; ++i) {
    const std::string name = "user" + std::to_string(i);
    costs[auth.cost_for(name)] += 1;
    CHECK(auth.cost_for(name) == auth.cost_for(name));
  }
  // About half each (a binomial of 200: 100 +- 7), and no other cost.
  REQUIRE(costs.size() == 2);
  CHECK(costs[4] > 60);
  CHECK(costs[5] > 60);
  CHECK(BasicAuth({}).cost_for("alice") == 0);
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
