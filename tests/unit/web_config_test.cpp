// SPDX-License-Identifier: Apache-2.0
// The web layer's configuration: listen addresses, telemetry paths, and the web configuration file
// (exporter-toolkit format) with every error it can give, against the test-only certificates in
// tests/fixtures/web.
#include "config/web_config.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "config/config.h"

namespace jitterd {
namespace {

namespace fs = std::filesystem;

const fs::path web_fixtures = fs::path(JITTERD_FIXTURES_DIR) / "web";
const std::string kHash = "$2y$04$QpcekFas4TsDdhhhvalQ.uFCTxq338o3gdaZbumCw4Fc8DNQjbLVW";  // "secret"

std::string read_text(const fs::path& path) {
  std::ifstream file(path);
  REQUIRE(file);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

WebSecurity parse(const std::string& text) { return parse_web_config(text, "web.yml", web_fixtures); }

std::vector<std::string> errors_of(const std::string& text) {
  try {
    parse(text);
  } catch (const ConfigErrors& errors) {
    std::vector<std::string> lines;
    for (const ConfigError& error : errors.errors()) lines.push_back(error.to_string());
    return lines;
  }
  FAIL("no error for:\n" << text);
  return {};
}

std::string only_error(const std::string& text) {
  const std::vector<std::string> errors = errors_of(text);
  REQUIRE(errors.size() == 1);
  return errors.front();
}

constexpr const char* kServerFiles = "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n";

}  // namespace

TEST_CASE("listen addresses: dotted-quad IPv4, bracketed IPv6 or none (every address), and a port",
          "[web_config]") {
  const auto v4 = parse_listen_address("10.1.2.3:9978");
  REQUIRE(v4);
  CHECK(*v4 == ListenAddress{"10.1.2.3", 9978, false});
  CHECK(v4->to_string() == "10.1.2.3:9978");
  const auto any6 = parse_listen_address("[::]:0");
  REQUIRE(any6);
  CHECK(*any6 == ListenAddress{"::", 0, true});
  CHECK(any6->to_string() == "[::]:0");
  CHECK(parse_listen_address("[::1]:65535"));
  CHECK(parse_listen_address("[2001:db8::7]:80"));
  CHECK(parse_listen_address("[::ffff:127.0.0.1]:80"));
  CHECK(parse_listen_address("255.255.255.255:1"));
  // node_exporter's form: every address, IPv6 and IPv4 alike.
  const auto every = parse_listen_address(":9978");
  REQUIRE(every);
  CHECK(*every == ListenAddress{"::", 9978, true, true});
  CHECK(every->to_string() == ":9978");

  const std::vector<std::pair<std::string, std::string>> bad{
      {"9978", "no port"},
      {":", "the port must be 0..65535"},
      {":99999", "the port must be 0..65535"},
      {"localhost:9978", "not a dotted-quad IPv4 address; host names are not taken"},
      {"01.2.3.4:80", "not a dotted-quad IPv4 address; host names are not taken"},
      {"1.2.3:80", "not a dotted-quad IPv4 address; host names are not taken"},
      {"256.0.0.1:80", "not a dotted-quad IPv4 address; host names are not taken"},
      {"1.2.3.4:", "the port must be 0..65535"},
      {"1.2.3.4:65536", "the port must be 0..65535"},
      {"1.2.3.4:+80", "the port must be 0..65535"},
      {"1.2.3.4:080", "the port must be 0..65535"},
      {"::1:80", "an IPv6 address needs brackets"},
      {"[::1]", "no port"},
      {"[::1]80", "no port"},
      {"[fe80::1%eth0]:80", "not an IPv6 address in the brackets; no zone index, no host name"},
      {"[localhost]:80", "not an IPv6 address in the brackets; no zone index, no host name"},
      {"[1.2.3.4]:80", "not an IPv6 address in the brackets; no zone index, no host name"},
      {"[]:80", "not an IPv6 address in the brackets; no zone index, no host name"}};
  for (const auto& [text, why] : bad) {
    INFO(text);
    std::string reason;
    CHECK_FALSE(parse_listen_address(text, &reason));
    CHECK(reason == why);
  }
}

TEST_CASE("telemetry paths are clean absolute paths", "[web_config]") {
  for (const char* good : {"/metrics", "/a/b/c", "/x.y_z~-1", "/..a", "/a.", "/_"}) {
    INFO(good);
    CHECK(telemetry_path_problem(good).empty());
  }
  const std::vector<std::pair<std::string, std::string>> bad{
      {"", "must start with \"/\""},
      {"metrics", "must start with \"/\""},
      {"/", "must not be \"/\", which is the status page"},
      {"/status.json", "must not be \"/status.json\", which the status page serves"},
      {"/baseline.json", "must not be \"/baseline.json\", which the status page serves"},
      {"//metrics", "must not hold an empty segment (\"//\" or a trailing \"/\")"},
      {"/metrics/", "must not hold an empty segment (\"//\" or a trailing \"/\")"},
      {"/a//b", "must not hold an empty segment (\"//\" or a trailing \"/\")"},
      {"/a/../b", "must not hold a \".\" or \"..\" segment"},
      {"/..", "must not hold a \".\" or \"..\" segment"},
      {"/./m", "must not hold a \".\" or \"..\" segment"},
      {"/metrics?x=1", "must hold only A-Z a-z 0-9 . _ ~ - between slashes"},
      {"/metrics#top", "must hold only A-Z a-z 0-9 . _ ~ - between slashes"},
      {"/a b", "must hold only A-Z a-z 0-9 . _ ~ - between slashes"},
      {"/a\nb", "must hold only A-Z a-z 0-9 . _ ~ - between slashes"},
      {"/%2e%2e", "must hold only A-Z a-z 0-9 . _ ~ - between slashes"},
      {"/<script>", "must hold only A-Z a-z 0-9 . _ ~ - between slashes"},
      {"/\"onload=", "must hold only A-Z a-z 0-9 . _ ~ - between slashes"},
      {"/" + std::string(256, 'a'), "must be at most 256 characters"}};
  for (const auto& [path, why] : bad) {
    INFO(path);
    CHECK(telemetry_path_problem(path) == why);
  }
}

TEST_CASE("the main configuration takes IPv6 and checks the telemetry path", "[web_config]") {
  CHECK(parse_config("web: {listen_address: \"[::]:9978\"}", "t.yaml").web.listen_address == "[::]:9978");
  CHECK(parse_config("web: {config_file: /etc/jitterd/web.yml}", "t.yaml").web.config_file ==
        "/etc/jitterd/web.yml");
  try {
    parse_config("web: {telemetry_path: /a/../b}", "t.yaml");
    FAIL("accepted /a/../b");
  } catch (const ConfigErrors& e) {
    CHECK(e.errors().at(0).to_string() ==
          "t.yaml:1:23: web.telemetry_path: must not hold a \".\" or \"..\" segment, got /a/../b");
  }
}

TEST_CASE("bcrypt hashes as htpasswd writes them", "[web_config]") {
  CHECK(is_bcrypt_hash(kHash));
  CHECK(is_bcrypt_hash("$2a$10$QpcekFas4TsDdhhhvalQ.uKkN7mTwWPwOOF3SrLsTgivGE.2sxcAq"));
  CHECK(is_bcrypt_hash("$2b$31$QpcekFas4TsDdhhhvalQ.uKkN7mTwWPwOOF3SrLsTgivGE.2sxcAq"));
  CHECK_FALSE(is_bcrypt_hash("$2x$10$QpcekFas4TsDdhhhvalQ.uKkN7mTwWPwOOF3SrLsTgivGE.2sxcAq"));
  CHECK_FALSE(is_bcrypt_hash("$2y$03$QpcekFas4TsDdhhhvalQ.uKkN7mTwWPwOOF3SrLsTgivGE.2sxcAq"));
  CHECK_FALSE(is_bcrypt_hash("$2y$32$QpcekFas4TsDdhhhvalQ.uKkN7mTwWPwOOF3SrLsTgivGE.2sxcAq"));
  CHECK_FALSE(is_bcrypt_hash("$2y$10$QpcekFas4TsDdhhhvalQ.uKkN7mTwWPwOOF3SrLsTgivGE.2sxcA"));
  CHECK_FALSE(is_bcrypt_hash("$2y$10$QpcekFas4TsDdhhhvalQ.uKkN7mTwWPwOOF3SrLsTgivGE.2sxc!q"));
  CHECK_FALSE(is_bcrypt_hash("secret"));
  CHECK_FALSE(is_bcrypt_hash("$6$salt$hash"));
}

TEST_CASE("a complete web configuration file", "[web_config]") {
  const WebSecurity security = parse(std::string(kServerFiles) +
                                     "  client_auth_type: RequireAndVerifyClientCert\n"
                                     "  client_ca_file: ca.crt\n"
                                     "  min_version: TLS13\n"
                                     "  prefer_server_cipher_suites: false\n"
                                     "http_server_config:\n"
                                     "  http2: false\n"
                                     "  headers:\n"
                                     "    X-Frame-Options: deny\n"
                                     "    Strict-Transport-Security: max-age=31536000\n"
                                     "basic_auth_users:\n"
                                     "  alice: " +
                                     kHash +
                                     "\n"
                                     "  bob: " +
                                     kHash + "\n");
  REQUIRE(security.tls);
  CHECK(security.tls->cert_pem == read_text(web_fixtures / "server.crt"));
  CHECK(security.tls->key_pem == read_text(web_fixtures / "server.key"));
  CHECK(security.tls->client_ca_pem == read_text(web_fixtures / "ca.crt"));
  CHECK(security.tls->client_auth == ClientAuth::require_and_verify_client_cert);
  CHECK(security.tls->min_version == TlsVersion::tls13);
  CHECK(security.tls->max_version == TlsVersion::tls13);
  CHECK_FALSE(security.tls->prefer_server_cipher_suites);
  CHECK(security.basic_auth_users == std::map<std::string, std::string>{{"alice", kHash}, {"bob", kHash}});
  CHECK(security.headers == std::vector<std::pair<std::string, std::string>>{
                                {"X-Frame-Options", "deny"}, {"Strict-Transport-Security", "max-age=31536000"}});
}

TEST_CASE("an empty web configuration file is plain HTTP without auth", "[web_config]") {
  CHECK(parse("") == WebSecurity{});
  CHECK(parse("# nothing\n") == WebSecurity{});
  CHECK(parse("tls_server_config:\nbasic_auth_users:\n") == WebSecurity{});
}

TEST_CASE("inline PEM texts and the defaults", "[web_config]") {
  const std::string cert = read_text(web_fixtures / "server.crt");
  const std::string key = read_text(web_fixtures / "server.key");
  const auto indent = [](const std::string& text) {
    std::string out;
    for (char c : text) out += c == '\n' ? std::string("\n    ") : std::string(1, c);
    return out;
  };
  const WebSecurity security =
      parse("tls_server_config:\n  cert: |\n    " + indent(cert) + "\n  key: |\n    " + indent(key) + "\n");
  REQUIRE(security.tls);
  CHECK(security.tls->cert_pem == cert);
  CHECK(security.tls->key_pem == key);
  CHECK(security.tls->client_auth == ClientAuth::no_client_cert);
  CHECK(security.tls->min_version == TlsVersion::tls12);
  CHECK(security.tls->max_version == TlsVersion::tls13);
  CHECK(security.tls->prefer_server_cipher_suites);
}

TEST_CASE("relative file names start at the web configuration file's directory", "[web_config]") {
  const fs::path directory = fs::temp_directory_path() / "jitterd-web-config-test";
  fs::create_directories(directory / "tls");
  fs::copy_file(web_fixtures / "server.crt", directory / "tls/server.crt", fs::copy_options::overwrite_existing);
  fs::copy_file(web_fixtures / "server.key", directory / "tls/server.key", fs::copy_options::overwrite_existing);
  std::ofstream(directory / "web.yml")
      << "tls_server_config: {cert_file: tls/server.crt, key_file: tls/server.key}\n";
  const WebSecurity security = load_web_config_file((directory / "web.yml").string());
  fs::remove_all(directory);
  REQUIRE(security.tls);
  CHECK(security.tls->cert_pem == read_text(web_fixtures / "server.crt"));
}

TEST_CASE("a missing web configuration file is one error naming it", "[web_config]") {
  try {
    load_web_config_file("/nonexistent/web.yml");
    FAIL("loaded");
  } catch (const ConfigErrors& e) {
    CHECK(std::string(e.what()) == "/nonexistent/web.yml: cannot read: No such file or directory");
  }
}

TEST_CASE("web configuration errors name file:line:column and the key", "[web_config]") {
  const std::string files = kServerFiles;
  const std::vector<std::pair<std::string, std::string>> cases{
      {"tls_server_conf: {}\n",
       "web.yml:1:1: tls_server_conf: unknown key; did you mean \"tls_server_config\"? (allowed: "
       "tls_server_config, http_server_config, basic_auth_users, rate_limit)"},
      {"tls_server_config: [a]\n",
       "web.yml:1:20: tls_server_config: must be a mapping with keys cert, key, client_ca, cert_file, key_file, "
       "client_ca_file, client_auth_type, min_version, max_version, prefer_server_cipher_suites, cipher_suites, "
       "curve_preferences, client_allowed_sans, got a sequence"},
      {"rate_limit: {interval: 1s, burst: 20}\n",
       "web.yml:1:13: rate_limit: not supported: rate limiting is not supported; the server's connection limits "
       "apply instead (see docs/operations.md)"},
      {"tls_server_config:\n  key_file: server.key\n",
       "web.yml:2:3: tls_server_config: needs cert_file (or cert)"},
      {"tls_server_config:\n  cert_file: server.crt\n", "web.yml:2:3: tls_server_config: needs key_file (or key)"},
      {files + "  cert: x\n",
       "web.yml:4:9: tls_server_config.cert: given together with tls_server_config.cert_file; keep one of them"},
      {"tls_server_config:\n  cert_file: missing.crt\n  key_file: server.key\n",
       "web.yml:2:14: tls_server_config.cert_file: cannot read " + (web_fixtures / "missing.crt").string() +
           ": No such file or directory"},
      {"tls_server_config:\n  cert_file: \"\"\n  key_file: server.key\n",
       "web.yml:2:14: tls_server_config.cert_file: must be a file name, got \"\""},
      {"tls_server_config:\n  cert_file: server.key\n  key_file: server.key\n",
       "web.yml:2:14: tls_server_config.cert_file: holds no PEM certificate"},
      {"tls_server_config:\n  cert_file: server.crt\n  key_file: encrypted.key\n",
       "web.yml:3:13: tls_server_config.key_file: is an encrypted key; jitterd takes unencrypted PEM keys"},
      {"tls_server_config:\n  cert_file: server.crt\n  key_file: other.key\n",
       "web.yml:3:13: tls_server_config.key_file: does not go with tls_server_config.cert_file (GnuTLS: The "
       "certificate and the given key do not match.)"},
      {files + "  client_auth_type: Always\n",
       "web.yml:4:21: tls_server_config.client_auth_type: must be one of NoClientCert, RequestClientCert, "
       "RequireAnyClientCert, VerifyClientCertIfGiven, RequireAndVerifyClientCert, got Always"},
      {files + "  client_ca_file: ca.crt\n",
       "web.yml:4:19: tls_server_config.client_ca_file: is only used with client_auth_type "
       "VerifyClientCertIfGiven "
       "or RequireAndVerifyClientCert, got NoClientCert"},
      {files + "  client_auth_type: RequireAndVerifyClientCert\n",
       "web.yml:4:21: tls_server_config.client_auth_type: RequireAndVerifyClientCert needs client_ca_file (or "
       "client_ca) to check client certificates against"},
      {files + "  client_auth_type: VerifyClientCertIfGiven\n  client_ca_file: server.key\n",
       "web.yml:5:19: tls_server_config.client_ca_file: holds no PEM certificate"},
      {files + "  min_version: TLS14\n",
       "web.yml:4:16: tls_server_config.min_version: must be one of TLS10, TLS11, TLS12, TLS13, got TLS14"},
      {files + "  min_version: TLS13\n  max_version: TLS12\n",
       "web.yml:5:16: tls_server_config.max_version: must be at least min_version (TLS13), got TLS12"},
      {files + "  prefer_server_cipher_suites: yes\n",
       "web.yml:4:32: tls_server_config.prefer_server_cipher_suites: must be true or false, got yes"},
      {files + "  cipher_suites: [TLS_AES_128_GCM_SHA256]\n",
       "web.yml:4:18: tls_server_config.cipher_suites: not supported: GnuTLS, under libmicrohttpd, does not take "
       "Go's cipher suite names; remove the key to get GnuTLS's default suites"},
      {files + "  curve_preferences: [X25519]\n",
       "web.yml:4:22: tls_server_config.curve_preferences: not supported: GnuTLS, under libmicrohttpd, does not "
       "take Go's curve names; remove the key to get GnuTLS's default curves"},
      {files + "  client_allowed_sans: [a]\n",
       "web.yml:4:24: tls_server_config.client_allowed_sans: not supported: client certificates are checked "
       "against client_ca only; issue client certificates from a dedicated CA"},
      {"http_server_config: {http2: maybe}\n",
       "web.yml:1:29: http_server_config.http2: must be true or false, got maybe"},
      {"http_server_config:\n  headers: {X-Powered-By: me}\n",
       "web.yml:2:13: http_server_config.headers.X-Powered-By: unknown key (allowed: Content-Security-Policy, "
       "X-Frame-Options, X-Content-Type-Options, X-XSS-Protection, Strict-Transport-Security)"},
      {"http_server_config:\n  headers: {X-Frame-Options: allow}\n",
       "web.yml:2:30: http_server_config.headers.X-Frame-Options: must be one of deny, sameorigin, got allow"},
      {"http_server_config:\n  headers: {X-XSS-Protection: \"1\\r\\nSet-Cookie: a\"}\n",
       "web.yml:2:31: http_server_config.headers.X-XSS-Protection: must not hold control characters"},
      {"basic_auth_users: [alice]\n",
       "web.yml:1:19: basic_auth_users: must be a mapping of user names to bcrypt hashes, got a sequence"},
      {"basic_auth_users:\n  \"a:b\": " + kHash + "\n",
       "web.yml:2:3: basic_auth_users: user names must be non-empty text without \":\" or control characters, "
       "got \"a:b\""},
      {"basic_auth_users:\n  alice: " + kHash + "\n  alice: " + kHash + "\n",
       "web.yml:3:3: basic_auth_users.alice: duplicate user"},
      {"tls_server_config: {\n", "web.yml:2:1: YAML syntax error: end of map flow not found"},
  };
  for (const auto& [text, message] : cases) {
    INFO(text);
    CHECK(only_error(text) == message);
  }
}

TEST_CASE("a bad password hash is reported without quoting it", "[web_config]") {
  const std::string almost = kHash.substr(0, 59) + "!";
  const std::string error = only_error("basic_auth_users:\n  alice: \"" + almost + "\"\n");
  CHECK(error ==
        "web.yml:2:10: basic_auth_users.alice: must be a bcrypt hash ($2a$, $2b$ or $2y$, cost 04..31, 60 "
        "characters, as htpasswd -nBC 10 \"\" prints it); the value is not shown");
  CHECK(error.find(almost.substr(7, 20)) == std::string::npos);
}

TEST_CASE("a bcrypt cost above the bound is refused, naming the key, the cost and the bound", "[web_config]") {
  CHECK(bcrypt_cost(kHash) == 4u);
  CHECK(bcrypt_cost("$2b$31$QpcekFas4TsDdhhhvalQ.uKkN7mTwWPwOOF3SrLsTgivGE.2sxcAq") == 31u);
  CHECK_FALSE(bcrypt_cost("$2b$32$QpcekFas4TsDdhhhvalQ.uKkN7mTwWPwOOF3SrLsTgivGE.2sxcAq"));
  CHECK_FALSE(bcrypt_cost("secret"));
  const std::string at_bound = "$2y$14$QpcekFas4TsDdhhhvalQ.uKkN7mTwWPwOOF3SrLsTgivGE.2sxcAq";
  CHECK(parse("basic_auth_users:\n  alice: " + at_bound + "\n").basic_auth_users.at("alice") == at_bound);
  for (const char* cost : {"15", "16", "31"}) {
    const std::string hash = std::string("$2y$") + cost + "$QpcekFas4TsDdhhhvalQ.uKkN7mTwWPwOOF3SrLsTgivGE.2sxcAq";
    const std::string error = only_error("basic_auth_users:\n  alice: " + kHash + "\n  bob: " + hash + "\n");
    CHECK(error == std::string("web.yml:3:8: basic_auth_users.bob: bcrypt cost ") + cost +
                       " is above 14, the most jitterd takes: each check of a password holds a CPU for 2^cost "
                       "rounds (cost 14 about a second, 31 about a day); hash it again at a lower cost, as "
                       "htpasswd -nBC 10 \"\" prints it (exporter-toolkit users choose 10..12); the value is not "
                       "shown");
    CHECK(error.find("QpcekFas4TsDdhhhvalQ") == std::string::npos);
  }
}

TEST_CASE("every error of a web configuration file is listed", "[web_config]") {
  const std::vector<std::string> errors = errors_of(
      "tls_server_config:\n  cert_file: server.crt\n  key_file: other.key\n  min_version: TLS9\n"
      "basic_auth_users: {bob: nope}\nextra: 1\n");
  REQUIRE(errors.size() == 4);
  CHECK(errors[0].rfind("web.yml:3:13: tls_server_config.key_file: does not go with", 0) == 0);
  CHECK(errors[1].rfind("web.yml:4:16: tls_server_config.min_version: must be one of", 0) == 0);
  CHECK(errors[2].rfind("web.yml:5:25: basic_auth_users.bob: must be a bcrypt hash", 0) == 0);
  CHECK(errors[3].rfind("web.yml:6:1: extra: unknown key", 0) == 0);
}

}  // namespace jitterd
