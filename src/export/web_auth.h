// SPDX-License-Identifier: Apache-2.0
// Who may talk to the web server: basic auth against bcrypt hashes (libxcrypt's crypt_r, compared
// in constant time, successes cached), and the TLS client-certificate policy each GnuTLS session gets before its
// handshake. libmicrohttpd 0.9.75 only asks for a client certificate when it has a CA list and
// never checks it; jitterd sets the request mode and a verify function on every session itself, so
// a missing or untrusted certificate fails the handshake, as Go's crypto/tls does for
// node_exporter. When and where a bcrypt runs (never on a web worker) is export/auth_gate.h's
// business. Thread-safety: BasicAuth is immutable after construction but for its cache, which
// has its own mutex, so every member is safe from any thread; the session functions act on one
// session from the thread that owns it.
#pragma once

#include <gnutls/gnutls.h>

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include "config/web_config.h"

namespace jitterd {

class BasicAuth {
 public:
  explicit BasicAuth(std::map<std::string, std::string> users);

  bool enabled() const { return !users_.empty(); }
  // The name under which the caches know a pair: an HMAC-SHA256 under a key drawn for this object,
  // never the password. Cheap (microseconds).
  std::string digest(std::string_view user, std::string_view password) const;
  // True when the pair of `digest` matched before: no bcrypt.
  bool verified(const std::string& digest) const;
  // True when `user` is configured and `password` matches its hash; a match is remembered, so a
  // scraper pays bcrypt (55 ms or more at cost 10) once, not on every scrape. Slow when the pair
  // was not verified before: one bcrypt at the user's cost. An unknown user costs one bcrypt too,
  // at the cost of a configured user picked by a keyed digest of the name (the same user for the
  // same name while the configuration is the same), so the time taken does not tell whether a
  // user exists, even when the users' hashes have different costs: an unknown name looks like a
  // user of one of the configured costs, as often as the configured users have each.
  bool check(std::string_view user, std::string_view password) const;
  // The bcrypt cost at which check() hashes for `user`, known or not; 0 without users.
  unsigned cost_for(std::string_view user) const;

 private:
  const std::string& hash_to_check(std::string_view user) const;

  std::map<std::string, std::string, std::less<>> users_;
  std::string cache_key_;  // drawn at random for this object
  std::string decoy_key_;  // SHA-256 of the users and hashes: the same while the file is
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
