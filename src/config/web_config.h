// SPDX-License-Identifier: Apache-2.0
// The web server's settings beyond two scalars: the listen address and telemetry path checks
// (shared by the YAML reader, the flags and the server, which binds what parse_listen_address
// gives), and the web configuration file (`--web.config.file`, `web.config_file`) in the Prometheus
// exporter-toolkit format: TLS and basic auth, as node_exporter users write it. The file is read
// as strictly as the main configuration (unknown keys are errors citing file:line:column, every
// error listed) together with the certificate, key and CA files it names, so a WebSecurity holds
// the PEM texts themselves and the server never opens a file. Messages never quote a private key
// or a password hash. Pure apart from reading those files; safe from any thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jitterd {

// Where to listen: an address literal and a port. No host names: a name may resolve to several
// addresses, or to others tomorrow, and the daemon would have to pick one silently.
struct ListenAddress {
  std::string host;  // "0.0.0.0", "127.0.0.1", "::", "::1": as written, without brackets
  std::uint16_t port = 0;
  bool ipv6 = false;
  // ":port" (node_exporter's form): every address, IPv6 and IPv4 ("::" with IPV6_V6ONLY off, or
  // "0.0.0.0" where the host has no IPv6)
  bool every_address = false;
  std::string to_string() const;  // "0.0.0.0:9978", "[::1]:9978", ":9978"
  bool operator==(const ListenAddress&) const = default;
};

// "a.b.c.d:port" (dotted quad, no leading zeros), "[ipv6]:port" or ":port" (every address), port
// 0..65535; nullopt with the reason in *reason otherwise.
std::optional<ListenAddress> parse_listen_address(std::string_view text, std::string* reason = nullptr);

// Empty when `path` is a clean absolute path: "/" then segments of A-Z a-z 0-9 . _ ~ - separated by
// single slashes, none of them "." or "..", no trailing slash, not "/" itself (the status page) nor "/status.json" or "/baseline.json" (its JSON and download),
// at most 256 characters. Otherwise what is wrong with it. Such a path needs no escaping in a URL
// or in HTML and means the same to every client and proxy.
std::string telemetry_path_problem(std::string_view path);

// tls_server_config.client_auth_type, Go's tls.ClientAuthType names.
enum class ClientAuth {
  no_client_cert,                 // NoClientCert: no certificate asked for
  request_client_cert,            // RequestClientCert: asked for, never checked
  require_any_client_cert,        // RequireAnyClientCert: required, never checked
  verify_client_cert_if_given,    // VerifyClientCertIfGiven: checked against client_ca if sent
  require_and_verify_client_cert  // RequireAndVerifyClientCert: required and checked
};
enum class TlsVersion { tls10, tls11, tls12, tls13 };

std::string_view to_string(ClientAuth auth);
std::string_view to_string(TlsVersion version);  // "TLS12"

// tls_server_config with its files read.
struct TlsServerConfig {
  std::string cert_pem;       // the server's certificate (chain), PEM
  std::string key_pem;        // its private key, PEM: a secret, never logged
  std::string client_ca_pem;  // the CAs client certificates are checked against; may be empty
  ClientAuth client_auth = ClientAuth::no_client_cert;
  TlsVersion min_version = TlsVersion::tls12;
  TlsVersion max_version = TlsVersion::tls13;
  bool prefer_server_cipher_suites = true;
  bool operator==(const TlsServerConfig&) const = default;
};

// One web configuration file, read. The default (no file) is plain HTTP without authentication.
struct WebSecurity {
  std::optional<TlsServerConfig> tls;                        // nullopt: plain HTTP
  std::map<std::string, std::string> basic_auth_users;       // user -> bcrypt hash; empty: no auth
  std::vector<std::pair<std::string, std::string>> headers;  // http_server_config.headers
  bool operator==(const WebSecurity&) const = default;
};

// A bcrypt hash as htpasswd -B writes it: $2a$, $2b$ or $2y$, a cost 04..31, 53 characters of
// salt and hash.
bool is_bcrypt_hash(std::string_view text);

// The highest bcrypt cost basic_auth_users may use. Checking a password costs 2^cost rounds of
// one CPU, on every login that is not already verified: cost 10 takes about 55 ms on the 2-CPU
// development guest, 14 about 0.8 s, 31 about a day. exporter-toolkit users choose 10..12; 14
// leaves room above that and keeps one check under about a second.
inline constexpr unsigned kMaxBcryptCost = 14;

// The cost of a hash that is_bcrypt_hash accepts; nullopt for anything else.
std::optional<unsigned> bcrypt_cost(std::string_view hash);

// Throws ConfigErrors (config.h). Relative file names in the file are relative to its directory,
// as exporter-toolkit reads them.
WebSecurity load_web_config_file(const std::string& path);

// As load_web_config_file, from text; path_for_messages names it in messages, base_directory is
// where relative file names start.
WebSecurity parse_web_config(const std::string& yaml_text, const std::string& path_for_messages,
                             const std::filesystem::path& base_directory);

}  // namespace jitterd
