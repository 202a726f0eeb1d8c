// Who may talk to the web server: basic auth against bcrypt hashes (libxcrypt's crypt_r, compared
// in constant time, successes cached), and the TLS client-certificate policy each GnuTLS session gets before its
// handshake. libmicrohttpd 0.9.75 only asks for a client certificate when it has a CA list and
// never checks it; jitterd sets the request mode and a verify function on every session itself, so
// a missing or untrusted certificate fails the handshake, as Go's crypto/tls does for
// node_exporter. Thread-safety: BasicAuth is immutable after construction and check() is safe from
// any thread; the session functions act on one session from the thread that owns it.
#pragma once

#include <gnutls/gnutls.h>

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include "config/web_config.h"

namespace jitterd {

// Thread-safety: check() is safe from any thread (the cache has its own mutex).
class BasicAuth {
 public:
  explicit BasicAuth(std::map<std::string, std::string> users);

  bool enabled() const { return !users_.empty(); }
  // True when `user` is configured and `password` matches its hash. An unknown user costs one
  // bcrypt computation too, so the time taken does not tell which users exist. A pair that
  // matched is remembered (as an HMAC under a key drawn for this object, never the password), so
  // a scraper pays bcrypt (0.1 s or more at cost 10) once, not on every scrape.
  bool check(std::string_view user, std::string_view password) const;

 private:
  std::string keyed_digest(std::string_view user, std::string_view password) const;

  std::map<std::string, std::string, std::less<>> users_;
  std::string cache_key_;
  mutable std::mutex mutex_;
  mutable std::set<std::string> verified_;  // keyed digests of pairs that matched, a few at most
};

// GnuTLS priority string for the configured versions: "NORMAL:-VERS-ALL:+VERS-TLS1.2:+VERS-TLS1.3",
// with %SERVER_PRECEDENCE when the server's cipher order is preferred.
std::string tls_priorities(const TlsServerConfig& tls);

// Sets `auth` on a server session that has not started its handshake: whether a client
// certificate is requested or required, and whether it must chain to the session's trusted CAs
// (the client_ca given to libmicrohttpd).
void apply_client_auth(gnutls_session_t session, ClientAuth auth);

}  // namespace jitterd
