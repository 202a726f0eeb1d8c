// SPDX-License-Identifier: Apache-2.0
#include "config/web_config.h"

#include <arpa/inet.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include <algorithm>
#include <array>

#include "config/config.h"
#include "config/config_reader.h"
#include "host/host_reader.h"
#include "host/text.h"

namespace jitterd {
namespace {

using config_detail::ConfigReader;
using config_detail::decimal;
using config_detail::Entry;
using config_detail::Field;

constexpr std::array<std::string_view, 5> kClientAuthNames{"NoClientCert", "RequestClientCert",
                                                           "RequireAnyClientCert", "VerifyClientCertIfGiven",
                                                           "RequireAndVerifyClientCert"};
constexpr std::array<std::string_view, 4> kTlsVersionNames{"TLS10", "TLS11", "TLS12", "TLS13"};

// The security headers exporter-toolkit allows, with the values it allows (empty: any).
struct AllowedHeader {
  std::string_view name;
  std::vector<std::string_view> values;
};
const std::vector<AllowedHeader> kAllowedHeaders{{"Content-Security-Policy", {}},
                                                 {"X-Frame-Options", {"deny", "sameorigin"}},
                                                 {"X-Content-Type-Options", {"nosniff"}},
                                                 {"X-XSS-Protection", {}},
                                                 {"Strict-Transport-Security", {}}};

bool is_ipv4_address(std::string_view text) {
  if (std::count(text.begin(), text.end(), '.') != 3) return false;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t dot = std::min(text.find('.', start), text.size());
    const std::optional<unsigned> octet = decimal(text.substr(start, dot - start));
    if (!octet || *octet > 255) return false;
    start = dot + 1;
  }
  return true;
}

bool is_path_character(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '~' || c == '-';
}

gnutls_datum_t datum(const std::string& text) {
  return {reinterpret_cast<unsigned char*>(const_cast<char*>(text.data())), static_cast<unsigned>(text.size())};
}

// How many certificates a PEM text holds, or the GnuTLS error (negative).
int count_certificates(const std::string& pem) {
  gnutls_x509_crt_t* list = nullptr;
  unsigned size = 0;
  const gnutls_datum_t data = datum(pem);
  const int rc = gnutls_x509_crt_list_import2(&list, &size, &data, GNUTLS_X509_FMT_PEM, 0);
  if (rc == GNUTLS_E_NO_CERTIFICATE_FOUND) return 0;
  if (rc < 0) return rc;
  for (unsigned i = 0; i < size; ++i) gnutls_x509_crt_deinit(list[i]);
  gnutls_free(list);
  return static_cast<int>(size);
}

// Empty if the key is a readable unencrypted PEM private key, else why not (never the key).
std::string private_key_problem(const std::string& pem) {
  gnutls_x509_privkey_t key = nullptr;
  if (gnutls_x509_privkey_init(&key) < 0) return "out of memory";
  const gnutls_datum_t data = datum(pem);
  const int rc = gnutls_x509_privkey_import2(key, &data, GNUTLS_X509_FMT_PEM, nullptr, 0);
  gnutls_x509_privkey_deinit(key);
  if (rc == GNUTLS_E_DECRYPTION_FAILED) return "is an encrypted key; jitterd takes unencrypted PEM keys";
  return rc < 0 ? std::string("is not a PEM private key (GnuTLS: ") + gnutls_strerror(rc) + ")" : "";
}

// Empty if the certificate and key belong together, as the server will load them.
std::string key_pair_problem(const std::string& cert, const std::string& key) {
  gnutls_certificate_credentials_t credentials = nullptr;
  if (gnutls_certificate_allocate_credentials(&credentials) < 0) return "out of memory";
  const gnutls_datum_t cert_data = datum(cert);
  const gnutls_datum_t key_data = datum(key);
  const int rc =
      gnutls_certificate_set_x509_key_mem2(credentials, &cert_data, &key_data, GNUTLS_X509_FMT_PEM, nullptr, 0);
  gnutls_certificate_free_credentials(credentials);
  return rc < 0 ? gnutls_strerror(rc) : "";
}

// A PEM text given inline (`cert:`) or by file name (`cert_file:`), read, with where it came from.
struct Pem {
  std::string text;
  std::string key;  // the dotted key that gave it, for messages
  SourceMark mark;
};

class WebConfigReader {
 public:
  WebConfigReader(ConfigReader& reader, std::filesystem::path base) : reader_(reader), base_(std::move(base)) {}

  WebSecurity read(const YAML::Node& root) {
    WebSecurity security;
    reader_.read_mapping(
        Entry{"", root, config_detail::to_source_mark(root.Mark())},
        {{"tls_server_config", [&](const Entry& e) { read_tls(e, security); }},
         {"http_server_config", [&](const Entry& e) { read_http(e, security); }},
         {"basic_auth_users", [&](const Entry& e) { read_users(e, security.basic_auth_users); }},
         {"rate_limit", unsupported("rate limiting is not supported; the server's connection limits "
                                    "apply instead (see docs/operations.md)")}});
    return security;
  }

 private:
  std::function<void(const Entry&)> unsupported(std::string why) {
    return [this, why](const Entry& e) { reader_.fail(e.key, e.mark, "not supported: " + why); };
  }

  void read_tls(const Entry& section, WebSecurity& security) {
    if (section.value.IsNull()) return;
    TlsServerConfig tls;
    std::optional<Pem> cert, key, client_ca;
    std::optional<Entry> auth_entry;
    std::optional<Entry> min_entry, max_entry;
    const auto file = [this](std::optional<Pem>& target) {
      return [this, &slot = target](const Entry& e) { set_pem(slot, e, true); };
    };
    const auto inline_text = [this](std::optional<Pem>& target) {
      return [this, &slot = target](const Entry& e) { set_pem(slot, e, false); };
    };
    reader_.read_mapping(
        section,
        {{"cert", inline_text(cert)},
         {"key", inline_text(key)},
         {"client_ca", inline_text(client_ca)},
         {"cert_file", file(cert)},
         {"key_file", file(key)},
         {"client_ca_file", file(client_ca)},
         {"client_auth_type",
          [&](const Entry& e) {
            auth_entry = e;
            if (auto name = reader_.choice(e, names(kClientAuthNames)))
              tls.client_auth = static_cast<ClientAuth>(index_of(kClientAuthNames, *name));
          }},
         {"min_version",
          [&](const Entry& e) {
            min_entry = e;
            read_version(e, tls.min_version);
          }},
         {"max_version",
          [&](const Entry& e) {
            max_entry = e;
            read_version(e, tls.max_version);
          }},
         {"prefer_server_cipher_suites",
          [&](const Entry& e) { config_detail::assign(tls.prefer_server_cipher_suites, reader_.boolean(e)); }},
         {"cipher_suites", unsupported("GnuTLS, under libmicrohttpd, does not take Go's cipher suite "
                                       "names; remove the key to get GnuTLS's default suites")},
         {"curve_preferences", unsupported("GnuTLS, under libmicrohttpd, does not take Go's curve "
                                           "names; remove the key to get GnuTLS's default curves")},
         {"client_allowed_sans", unsupported("client certificates are checked against client_ca "
                                             "only; issue client certificates from a dedicated CA")}});
    if (!section.value.IsMap()) return;  // reported by read_mapping
    if (!cert) return reader_.fail(section.key, section.mark, "needs cert_file (or cert)");
    if (!key) return reader_.fail(section.key, section.mark, "needs key_file (or key)");
    if (min_entry && max_entry && tls.min_version > tls.max_version)
      reader_.fail(max_entry->key, max_entry->mark,
                   "must be at least min_version (" + std::string(to_string(tls.min_version)) + "), got " +
                       std::string(to_string(tls.max_version)));
    check_client_auth(tls.client_auth, auth_entry, client_ca, section);
    if (!check_key_pair(*cert, *key)) return;
    if (client_ca && (client_ca->text.empty() || !holds_certificate(*client_ca))) return;
    tls.cert_pem = std::move(cert->text);
    tls.key_pem = std::move(key->text);
    if (client_ca) tls.client_ca_pem = std::move(client_ca->text);
    security.tls = std::move(tls);
  }

  // Inline and file forms of one PEM are exclusive, as in exporter-toolkit.
  void set_pem(std::optional<Pem>& target, const Entry& e, bool is_file) {
    if (target) {
      reader_.fail(e.key, e.mark, "given together with " + target->key + "; keep one of them");
      return;
    }
    const std::optional<std::string> text = reader_.scalar(e, is_file ? "a file name" : "a PEM text");
    if (!text || text->empty()) {
      if (text) reader_.fail(e.key, e.mark, is_file ? "must be a file name, got \"\"" : "must not be empty");
      target = Pem{"", e.key, e.mark};  // so that "needs cert_file" does not follow
      return;
    }
    if (!is_file) {
      target = Pem{*text, e.key, e.mark};
      return;
    }
    const std::filesystem::path path = base_ / *text;
    std::string reason;
    const std::optional<std::string> content = read_regular_file(path, kMaxPemFileBytes, &reason);
    if (!content) reader_.fail(e.key, e.mark, "cannot read " + path.string() + ": " + reason);
    target = Pem{content.value_or(""), e.key, e.mark};
  }

  void read_version(const Entry& e, TlsVersion& version) {
    if (auto name = reader_.choice(e, names(kTlsVersionNames)))
      version = static_cast<TlsVersion>(index_of(kTlsVersionNames, *name));
  }

  void check_client_auth(ClientAuth auth, const std::optional<Entry>& auth_entry,
                         const std::optional<Pem>& client_ca, const Entry& section) {
    const bool verifies =
        auth == ClientAuth::verify_client_cert_if_given || auth == ClientAuth::require_and_verify_client_cert;
    if (client_ca && !verifies)
      reader_.fail(client_ca->key, client_ca->mark,
                   "is only used with client_auth_type VerifyClientCertIfGiven or "
                   "RequireAndVerifyClientCert, got " +
                       std::string(to_string(auth)));
    else if (!client_ca && verifies)
      reader_.fail(auth_entry ? auth_entry->key : section.key, auth_entry ? auth_entry->mark : section.mark,
                   std::string(to_string(auth)) +
                       " needs client_ca_file (or client_ca) to check client "
                       "certificates against");
  }

  bool check_key_pair(const Pem& cert, const Pem& key) {
    if (cert.text.empty() || key.text.empty()) return false;  // already reported
    bool valid = holds_certificate(cert);
    if (const std::string problem = private_key_problem(key.text); !problem.empty()) {
      reader_.fail(key.key, key.mark, problem);
      valid = false;
    }
    if (!valid) return false;
    if (const std::string problem = key_pair_problem(cert.text, key.text); !problem.empty()) {
      reader_.fail(key.key, key.mark, "does not go with " + cert.key + " (GnuTLS: " + problem + ")");
      return false;
    }
    return true;
  }

  // Whether `pem` holds a certificate; says at its key that it holds none.
  bool holds_certificate(const Pem& pem) {
    const int certificates = count_certificates(pem.text);
    if (certificates > 0) return true;
    reader_.fail(
        pem.key, pem.mark,
        "holds no PEM certificate" +
            (certificates < 0 ? std::string(" (GnuTLS: ") + gnutls_strerror(certificates) + ")" : std::string()));
    return false;
  }

  void read_http(const Entry& section, WebSecurity& security) {
    reader_.read_mapping(section,
                         {// Accepted for node_exporter files, and without effect: the server speaks HTTP/1.1 only.
                          {"http2", [&](const Entry& e) { reader_.boolean(e); }},
                          {"headers", [&](const Entry& e) { read_headers(e, security.headers); }}});
  }

  void read_headers(const Entry& section, std::vector<std::pair<std::string, std::string>>& headers) {
    std::vector<Field> fields;
    for (const AllowedHeader& allowed : kAllowedHeaders) {
      fields.push_back({allowed.name, [&, allowed](const Entry& e) {
                          std::optional<std::string> value = allowed.values.empty()
                                                                 ? reader_.scalar(e, "a header value")
                                                                 : reader_.choice(e, allowed.values);
                          if (!value) return;
                          if (std::any_of(value->begin(), value->end(), [](char c) {
                                return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
                              }))
                            return reader_.fail(e.key, e.mark, "must not hold control characters");
                          if (!value->empty()) headers.emplace_back(allowed.name, *value);
                        }});
    }
    reader_.read_mapping(section, fields);
  }

  // A mapping of free user names, so not read_mapping: duplicates are checked here.
  void read_users(const Entry& section, std::map<std::string, std::string>& users) {
    if (section.value.IsNull()) return;
    if (!section.value.IsMap()) {
      reader_.expect(section, "a mapping of user names to bcrypt hashes");
      return;
    }
    for (const auto& pair : section.value) {
      const SourceMark key_mark = config_detail::to_source_mark(pair.first.Mark());
      const std::string name = pair.first.IsScalar() ? pair.first.Scalar() : "";
      const std::string key = section.key + "." + name;
      if (!pair.first.IsScalar() || name.empty() || name.find(':') != std::string::npos ||
          std::any_of(name.begin(), name.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; })) {
        reader_.fail(section.key, key_mark,
                     "user names must be non-empty text without \":\" or control characters, got " +
                         config_detail::describe(pair.first));
        continue;
      }
      if (users.count(name) != 0) {
        reader_.fail(key, key_mark, "duplicate user");
        continue;
      }
      const SourceMark mark = config_detail::mark_of(pair.second, key_mark);
      // Never quote the value: a hash is a secret too.
      if (!pair.second.IsScalar() || !is_bcrypt_hash(pair.second.Scalar())) {
        reader_.fail(key, mark,
                     "must be a bcrypt hash ($2a$, $2b$ or $2y$, cost 04..31, 60 characters, as "
                     "htpasswd -nBC 10 \"\" prints it); the value is not shown");
        continue;
      }
      if (const unsigned cost = bcrypt_cost(pair.second.Scalar()).value_or(0); cost > kMaxBcryptCost) {
        reader_.fail(
            key, mark,
            "bcrypt cost " + std::to_string(cost) + " is above " + std::to_string(kMaxBcryptCost) +
                ", the most jitterd takes: each check of a password holds a CPU for 2^cost rounds (cost " +
                std::to_string(kMaxBcryptCost) +
                " about a second, 31 about a day); hash it again at a lower cost, as htpasswd -nBC 10 "
                "\"\" prints it (exporter-toolkit users choose 10..12); the value is not shown");
        continue;
      }
      users.emplace(name, pair.second.Scalar());
    }
  }

  template <std::size_t N>
  static std::vector<std::string_view> names(const std::array<std::string_view, N>& all) {
    return std::vector<std::string_view>(all.begin(), all.end());
  }

  template <std::size_t N>
  static std::size_t index_of(const std::array<std::string_view, N>& names, std::string_view name) {
    return static_cast<std::size_t>(std::find(names.begin(), names.end(), name) - names.begin());
  }

  ConfigReader& reader_;
  std::filesystem::path base_;
};

}  // namespace

std::string ListenAddress::to_string() const {
  if (every_address) return ":" + std::to_string(port);
  return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::optional<ListenAddress> parse_listen_address(std::string_view text, std::string* reason) {
  const auto fail = [&](std::string why) -> std::optional<ListenAddress> {
    if (reason) *reason = std::move(why);
    return std::nullopt;
  };
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || (text.front() == '[' && (colon == 0 || text[colon - 1] != ']')))
    return fail("no port");
  const std::string_view host = text.substr(0, colon);
  const std::optional<unsigned> port = decimal(text.substr(colon + 1));
  if (!port || *port > 65535) return fail("the port must be 0..65535");
  ListenAddress address;
  address.port = static_cast<std::uint16_t>(*port);
  if (host.empty()) {
    address.host = "::";
    address.ipv6 = true;
    address.every_address = true;
    return address;
  }
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    address.host = std::string(host.substr(1, host.size() - 2));
    in6_addr ignored{};
    if (inet_pton(AF_INET6, address.host.c_str(), &ignored) != 1)
      return fail("not an IPv6 address in the brackets; no zone index, no host name");
    address.ipv6 = true;
    return address;
  }
  if (host.find(':') != std::string_view::npos) return fail("an IPv6 address needs brackets");
  if (!is_ipv4_address(host)) return fail("not a dotted-quad IPv4 address; host names are not taken");
  address.host = std::string(host);
  return address;
}

std::string telemetry_path_problem(std::string_view path) {
  if (path.empty() || path.front() != '/') return "must start with \"/\"";
  if (path == "/") return "must not be \"/\", which is the status page";
  if (path == "/status.json" || path == "/baseline.json")
    return "must not be \"" + std::string(path) + "\", which the status page serves";
  if (path.size() > 256) return "must be at most 256 characters";
  for (std::size_t start = 1; start <= path.size();) {
    const std::size_t slash = std::min(path.find('/', start), path.size());
    const std::string_view segment = path.substr(start, slash - start);
    if (segment.empty()) return "must not hold an empty segment (\"//\" or a trailing \"/\")";
    if (segment == "." || segment == "..") return "must not hold a \".\" or \"..\" segment";
    if (!std::all_of(segment.begin(), segment.end(), is_path_character))
      return "must hold only A-Z a-z 0-9 . _ ~ - between slashes";
    start = slash + 1;
  }
  return "";
}

std::string_view to_string(ClientAuth auth) { return kClientAuthNames[static_cast<std::size_t>(auth)]; }
std::string_view to_string(TlsVersion version) { return kTlsVersionNames[static_cast<std::size_t>(version)]; }

std::optional<unsigned> bcrypt_cost(std::string_view hash) {
  if (!is_bcrypt_hash(hash)) return std::nullopt;
  return parse_number<unsigned>(hash.substr(4, 2));
}

bool is_bcrypt_hash(std::string_view text) {
  constexpr std::string_view alphabet = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  if (text.size() != 60 || text[0] != '$' || text[1] != '2' || text[3] != '$' || text[6] != '$') return false;
  if (text[2] != 'a' && text[2] != 'b' && text[2] != 'y') return false;
  const std::optional<unsigned> cost = parse_number<unsigned>(text.substr(4, 2));
  if (!cost || *cost < 4 || *cost > 31 || !all_digits(text.substr(4, 2))) return false;
  return text.substr(7).find_first_not_of(alphabet) == std::string_view::npos;
}

WebSecurity load_web_config_file(const std::string& path) {
  return parse_web_config(read_config_text(path), path, std::filesystem::path(path).parent_path());
}

WebSecurity parse_web_config(const std::string& yaml_text, const std::string& path_for_messages,
                             const std::filesystem::path& base_directory) {
  ConfigReader reader(path_for_messages);
  const std::optional<YAML::Node> root = reader.load(yaml_text);
  WebSecurity security;
  if (root) security = WebConfigReader(reader, base_directory).read(*root);
  reader.throw_if_errors();
  return security;
}

}  // namespace jitterd
