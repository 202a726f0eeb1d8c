// SPDX-License-Identifier: Apache-2.0
#include "export/web_auth.h"

#include <crypt.h>
#include <gnutls/crypto.h>

#include <cstdint>
#include <iterator>
#include <memory>
#include <stdexcept>

namespace jitterd {

namespace {
// Verified pairs kept at most; beyond, checks simply cost bcrypt again.
constexpr std::size_t kCacheLimit = 64;

bool equal_in_constant_time(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char difference = 0;
  for (std::size_t i = 0; i < a.size(); ++i) difference |= static_cast<unsigned char>(a[i] ^ b[i]);
  return difference == 0;
}

// crypt_r of `password` with the salt and cost of `hash`; empty when libxcrypt refuses.
std::string bcrypt(std::string_view password, const std::string& hash) {
  // crypt_data is 32 kB: on the heap, one per call, so checks on several threads never share it.
  auto data = std::make_unique<crypt_data>();
  const std::string key(password);
  const char* result = crypt_r(key.c_str(), hash.c_str(), data.get());
  // libxcrypt signals failure by a string starting with '*', never a valid hash.
  return result == nullptr || result[0] == '*' ? std::string() : std::string(result);
}

// Called by GnuTLS once the client's certificate message has arrived; non-zero fails the
// handshake. Presence is enforced by GNUTLS_CERT_REQUIRE where required, so no certificate is
// accepted here (VerifyClientCertIfGiven).
int verify_client_certificate(gnutls_session_t session) {
  unsigned int count = 0;
  if (gnutls_certificate_get_peers(session, &count) == nullptr || count == 0) return 0;
  unsigned int status = 0;
  if (gnutls_certificate_verify_peers2(session, &status) < 0) return -1;
  return status == 0 ? 0 : -1;
}
}  // namespace

BasicAuth::BasicAuth(std::map<std::string, std::string> users)
    : users_(users.begin(), users.end()), cache_key_(32, '\0'), decoy_key_(32, '\0') {
  if (gnutls_rnd(GNUTLS_RND_KEY, cache_key_.data(), cache_key_.size()) != 0)
    throw std::runtime_error("basic auth: no random key from GnuTLS");
  std::string all;
  for (const auto& [user, hash] : users_) all += std::to_string(user.size()) + ":" + user + hash;
  gnutls_hash_fast(GNUTLS_DIG_SHA256, all.data(), all.size(), decoy_key_.data());
}

std::string BasicAuth::digest(std::string_view user, std::string_view password) const {
  // The user's length first, so that ("ab", "c") and ("a", "bc") differ.
  const std::string text = std::to_string(user.size()) + ":" + std::string(user) + std::string(password);
  std::string digest(32, '\0');
  gnutls_hmac_fast(GNUTLS_MAC_SHA256, cache_key_.data(), cache_key_.size(), text.data(), text.size(),
                   digest.data());
  return digest;
}

bool BasicAuth::verified(const std::string& digest) const {
  std::lock_guard lock(mutex_);
  return verified_.count(digest) != 0;
}

const std::string& BasicAuth::hash_to_check(std::string_view user) const {
  const auto found = users_.find(user);
  if (found != users_.end()) return found->second;
  // An unknown user: the hash of the configured user that a keyed digest of the name picks.
  unsigned char pick[32];
  gnutls_hmac_fast(GNUTLS_MAC_SHA256, decoy_key_.data(), decoy_key_.size(), user.data(), user.size(), pick);
  std::uint64_t number = 0;
  for (int i = 0; i < 8; ++i) number = (number << 8) | pick[i];
  return std::next(users_.begin(), static_cast<std::ptrdiff_t>(number % users_.size()))->second;
}

unsigned BasicAuth::cost_for(std::string_view user) const {
  return users_.empty() ? 0 : bcrypt_cost(hash_to_check(user)).value_or(0);
}

bool BasicAuth::check(std::string_view user, std::string_view password) const {
  // crypt_r takes C strings: a NUL would cut the password short.
  if (users_.empty() || password.find('\0') != std::string_view::npos) return false;
  const std::string pair = digest(user, password);
  if (verified(pair)) return true;
  const std::string& hash = hash_to_check(user);
  const std::string computed = bcrypt(password, hash);
  const bool match = !computed.empty() && equal_in_constant_time(computed, hash) && users_.count(user) != 0;
  if (match) {
    std::lock_guard lock(mutex_);
    if (verified_.size() < kCacheLimit) verified_.insert(pair);
  }
  return match;
}

std::string tls_priorities(const TlsServerConfig& tls) {
  static constexpr const char* kVersions[] = {"+VERS-TLS1.0", "+VERS-TLS1.1", "+VERS-TLS1.2", "+VERS-TLS1.3"};
  std::string priorities = "NORMAL:-VERS-ALL";
  for (auto v = static_cast<int>(tls.min_version); v <= static_cast<int>(tls.max_version); ++v)
    priorities += std::string(":") + kVersions[v];
  if (tls.prefer_server_cipher_suites) priorities += ":%SERVER_PRECEDENCE";
  return priorities;
}

void apply_client_auth(gnutls_session_t session, ClientAuth auth) {
  switch (auth) {
    case ClientAuth::no_client_cert:
      gnutls_certificate_server_set_request(session, GNUTLS_CERT_IGNORE);
      return;
    case ClientAuth::request_client_cert:
      gnutls_certificate_server_set_request(session, GNUTLS_CERT_REQUEST);
      return;
    case ClientAuth::require_any_client_cert:
      gnutls_certificate_server_set_request(session, GNUTLS_CERT_REQUIRE);
      return;
    case ClientAuth::verify_client_cert_if_given:
      gnutls_certificate_server_set_request(session, GNUTLS_CERT_REQUEST);
      gnutls_session_set_verify_function(session, verify_client_certificate);
      return;
    case ClientAuth::require_and_verify_client_cert:
      gnutls_certificate_server_set_request(session, GNUTLS_CERT_REQUIRE);
      gnutls_session_set_verify_function(session, verify_client_certificate);
      return;
  }
}

}  // namespace jitterd
