#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""TLS and basic auth from a web configuration file (--web.config.file, exporter-toolkit format),
as curl and Python's ssl see them: the right CA and password work, a wrong or missing password is
401, an expired server certificate is refused by the client, client certificates are required and
checked as configured, min_version is enforced, and a reload with a broken certificate keeps the
old one serving while a good one is taken up. Certificates are made here with the openssl command.

Usage: tls_test.py --jitterd BINARY [unittest args]; exit 77 (skip) without openssl or with fewer
than 2 CPUs.
"""

import base64
import hashlib
import http.client
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile

import harness
from web_test import SECRET_HASH, WEB_CONFIG, log_count, raw_request

AUTH = "Basic " + base64.b64encode(b"alice:secret").decode()


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


CA_CONFIG = """\
[ca]
default_ca = test
[test]
database = index.txt
new_certs_dir = .
serial = serial
default_md = sha256
policy = any
unique_subject = no
[any]
commonName = supplied
[server]
subjectAltName = IP:127.0.0.1,DNS:localhost
"""


class Certificates:
    """A server CA with a server certificate (and a second one, for rotation, and an expired one),
    a client CA with a client certificate, and a client certificate from the wrong CA."""

    def __init__(self, directory):
        self.dir = directory
        for ca in ("ca", "client_ca"):
            openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", f"{ca}.key", "-out", f"{ca}.crt", "-days", "2", "-subj", f"/CN=jitterd {ca}",
                    cwd=directory)
        with open(os.path.join(directory, "san.ext"), "w") as ext:
            ext.write("subjectAltName = IP:127.0.0.1,DNS:localhost\n")
        self.issue("server", "ca", "localhost", "san.ext")
        self.issue("server2", "ca", "localhost", "san.ext")
        self.issue("client", "client_ca", "scraper")
        self.issue("rogue", "ca", "scraper")
        # An expired one: `openssl x509` takes no past dates, `openssl ca` does.
        with open(os.path.join(directory, "ca.cnf"), "w") as config:
            config.write(CA_CONFIG)
        open(os.path.join(directory, "index.txt"), "w").close()
        with open(os.path.join(directory, "serial"), "w") as serial:
            serial.write("1000\n")
        openssl("ca", "-batch", "-config", "ca.cnf", "-cert", "ca.crt", "-keyfile", "ca.key", "-in", "server.csr",
                "-out", "expired.crt", "-startdate", "20200101000000Z", "-enddate", "20200102000000Z",
                "-extensions", "server", "-notext", cwd=directory)

    def issue(self, name, ca, subject, extensions=None):
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", f"{name}.key",
                "-out", f"{name}.csr", "-subj", f"/CN={subject}", cwd=self.dir)
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key",
                "-CAcreateserial", "-out", f"{name}.crt", "-days", "2",
                *(["-extfile", extensions] if extensions else []), cwd=self.dir)

    def path(self, name):
        return os.path.join(self.dir, name)


CERTS = None  # made once per script run, in main()


def client_context(ca="ca.crt", cert=None, minimum=None, maximum=None):
    context = ssl.create_default_context(cafile=CERTS.path(ca))
    if cert:
        context.load_cert_chain(CERTS.path(f"{cert}.crt"), CERTS.path(f"{cert}.key"))
    if minimum:
        context.minimum_version = minimum
    if maximum:
        context.maximum_version = maximum
    return context


def https_get(address, path="/metrics", context=None, authorization=AUTH):
    """(status, headers, body) over TLS; raises what the client raises."""
    host, _, port = address.rpartition(":")
    connection = http.client.HTTPSConnection(host, int(port), context=context or client_context(), timeout=10)
    try:
        connection.request("GET", path, headers={"Authorization": authorization} if authorization else {})
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def refusal(address, **kwargs):
    """The client-side error of a refused TLS connection, or None when a response came."""
    try:
        status, _, _ = https_get(address, **kwargs)
    except (ssl.SSLError, ConnectionError, http.client.HTTPException, OSError) as error:
        return error
    return None if status else "no status"


def served_certificate(address):
    """SHA-256 of the certificate the server presents (not verified)."""
    host, _, port = address.rpartition(":")
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    with socket.create_connection((host, int(port)), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname=host) as tls:
            return hashlib.sha256(tls.getpeercert(binary_form=True)).hexdigest()


def web_config(cert="server", client_auth=None, client_ca=None, min_version=None, users=True):
    text = f"tls_server_config:\n  cert_file: {CERTS.path(cert + '.crt')}\n  key_file: {CERTS.path('server.key')}\n"
    if cert == "server2":
        text = text.replace("server.key", "server2.key")
    if client_auth:
        text += f"  client_auth_type: {client_auth}\n"
    if client_ca:
        text += f"  client_ca_file: {CERTS.path(client_ca)}\n"
    if min_version:
        text += f"  min_version: {min_version}\n"
    if users:
        text += f"basic_auth_users:\n  alice: {SECRET_HASH}\n"
    return text


class TlsDaemonCase(harness.DaemonTestCase):
    def tls_daemon(self, web_text):
        path = os.path.join(self.workdir, "web.yml")
        harness.write_file(path, web_text)
        daemon = self.daemon(WEB_CONFIG, args=["--web.config.file", path])
        daemon.web_config_path = path
        return daemon


class TlsAndAuthTest(TlsDaemonCase):
    """One daemon with TLS (server certificate only) and basic auth, for the read-only checks."""

    @classmethod
    def setUpClass(cls):
        cls.case = TlsDaemonCase()
        cls.case.setUp()
        cls.addClassCleanup(cls.case.doCleanups)
        cls.daemon = cls.case.tls_daemon(web_config())

    def test_right_ca_and_password(self):
        status, headers, body = https_get(self.daemon.address)
        self.assertEqual(status, 200)
        self.assertIn(b"jitterd_build_info", body)
        self.assertTrue(headers["Content-Type"].startswith("text/plain; version=0.0.4"))
        self.assertIn("https, TLS12..TLS13, basic auth", self.daemon.log())

    def test_curl_with_the_ca(self):
        if shutil.which("curl") is None:
            self.skipTest("curl not found")
        url = f"https://{self.daemon.address}/metrics"
        for user, expected in (("alice:secret", "200"), ("alice:wrong", "401")):
            with self.subTest(user=user):
                result = subprocess.run(["curl", "-sS", "--cacert", CERTS.path("ca.crt"), "-u", user, "-o",
                                         os.devnull, "-w", "%{http_code}", url],
                                        capture_output=True, text=True, timeout=30)
                self.assertEqual((result.returncode, result.stdout), (0, expected), result.stderr)

    def test_wrong_or_missing_password_is_401_with_a_challenge(self):
        for name, authorization in (("no password", None),
                                    ("wrong password", "Basic " + base64.b64encode(b"alice:Secret").decode()),
                                    ("unknown user", "Basic " + base64.b64encode(b"mallory:secret").decode()),
                                    ("not basic", "Bearer secret")):
            for path in ("/metrics", "/", "/?refresh=5", "/status.json", "/baseline.json", "/nope"):
                with self.subTest(name=name, path=path):
                    status, headers, body = https_get(self.daemon.address, path, authorization=authorization)
                    self.assertEqual(status, 401)
                    self.assertEqual(headers.get("WWW-Authenticate"), 'Basic realm="jitterd"')
                    self.assertNotIn(b"jitterd_build_info", body)
                    self.assertNotIn(b"jitterd-status", body)
                    self.assertNotIn(b"jitterd-baseline", body)
                    self.assertNotIn("Content-Disposition", headers)

    def test_status_paths_are_served_over_tls_with_the_password(self):
        authorization = "Basic " + base64.b64encode(b"alice:secret").decode()
        for path, kind, marker in (("/", "text/html", b"<h2>Samplers</h2>"),
                                   ("/status.json", "application/json", b'"jitterd-status"'),
                                   ("/baseline.json", "application/json", b'"jitterd-baseline"')):
            with self.subTest(path=path):
                status, headers, body = https_get(self.daemon.address, path, authorization=authorization)
                self.assertEqual(status, 200)
                self.assertTrue(headers["Content-Type"].startswith(kind))
                self.assertIn(marker, body)

    def test_untrusted_server_certificate_is_refused_by_the_client(self):
        error = refusal(self.daemon.address, context=client_context(ca="client_ca.crt"))
        self.assertIsInstance(error, ssl.SSLCertVerificationError)

    def test_plain_http_gets_no_metrics(self):
        try:
            status, _, body = raw_request(self.daemon.address, "GET", "/metrics")
        except (OSError, IndexError, ValueError):
            return
        self.assertNotEqual(status, 200)
        self.assertNotIn(b"jitterd_build_info", body)

    def test_no_secret_in_the_log(self):
        https_get(self.daemon.address, authorization="Basic " + base64.b64encode(b"alice:wrong").decode())
        log = self.daemon.log()
        for secret in (SECRET_HASH, "secret", "PRIVATE KEY", "wrong"):
            self.assertNotIn(secret, log)


class ExpiredCertificateTest(TlsDaemonCase):
    def test_an_expired_server_certificate_is_refused_by_the_client(self):
        daemon = self.tls_daemon(web_config(cert="expired"))
        error = refusal(daemon.address)
        self.assertIsInstance(error, ssl.SSLCertVerificationError)
        self.assertIn("expired", str(error))
        if shutil.which("curl"):
            result = subprocess.run(["curl", "-sS", "--cacert", CERTS.path("ca.crt"), "-u", "alice:secret",
                                     f"https://{daemon.address}/metrics"], capture_output=True, text=True, timeout=30)
            self.assertEqual(result.returncode, 60, result.stderr)  # peer certificate cannot be authenticated
            self.assertIn("expired", result.stderr)
        self.stop_ok(daemon)


class ClientCertificateTest(TlsDaemonCase):
    def check(self, daemon, cert, accepted):
        error = refusal(daemon.address, context=client_context(cert=cert))
        if accepted:
            self.assertIsNone(error, f"client certificate {cert}: refused with {error!r}")
        else:
            self.assertIsNotNone(error, f"client certificate {cert}: accepted")

    def test_require_and_verify(self):
        daemon = self.tls_daemon(web_config(client_auth="RequireAndVerifyClientCert", client_ca="client_ca.crt"))
        self.assertIn("client certificates RequireAndVerifyClientCert", daemon.log())
        self.check(daemon, None, accepted=False)
        self.check(daemon, "rogue", accepted=False)
        self.check(daemon, "client", accepted=True)
        self.stop_ok(daemon)

    def test_verify_if_given(self):
        daemon = self.tls_daemon(web_config(client_auth="VerifyClientCertIfGiven", client_ca="client_ca.crt"))
        self.check(daemon, None, accepted=True)
        self.check(daemon, "rogue", accepted=False)
        self.check(daemon, "client", accepted=True)
        self.stop_ok(daemon)

    def test_require_any(self):
        daemon = self.tls_daemon(web_config(client_auth="RequireAnyClientCert"))
        self.check(daemon, None, accepted=False)
        self.check(daemon, "rogue", accepted=True)
        self.stop_ok(daemon)


class VersionTest(TlsDaemonCase):
    def test_min_version_tls13_refuses_a_tls12_client(self):
        daemon = self.tls_daemon(web_config(min_version="TLS13"))
        error = refusal(daemon.address, context=client_context(maximum=ssl.TLSVersion.TLSv1_2))
        self.assertIsInstance(error, ssl.SSLError)
        self.assertIsNone(refusal(daemon.address, context=client_context(minimum=ssl.TLSVersion.TLSv1_3)))
        self.stop_ok(daemon)

    def test_default_takes_tls12(self):
        daemon = self.tls_daemon(web_config())
        self.assertIsNone(refusal(daemon.address, context=client_context(maximum=ssl.TLSVersion.TLSv1_2)))
        self.stop_ok(daemon)


class TlsReloadTest(TlsDaemonCase):
    def reload_successful(self, daemon):
        _, _, body = https_get(daemon.address)
        return float(re.search(rb"^jitterd_config_last_reload_successful (\S+)$", body, re.M).group(1))

    def test_broken_certificate_keeps_the_old_one_then_rotation_takes_the_new(self):
        # The certificate files the web configuration names, copied so the test can break them.
        cert = os.path.join(self.workdir, "tls.crt")
        key = os.path.join(self.workdir, "tls.key")
        shutil.copy(CERTS.path("server.crt"), cert)
        shutil.copy(CERTS.path("server.key"), key)
        daemon = self.tls_daemon(f"tls_server_config: {{cert_file: tls.crt, key_file: tls.key}}\n"
                                 f"basic_auth_users: {{alice: {SECRET_HASH}}}\n")
        original = served_certificate(daemon.address)
        self.assertEqual(self.reload_successful(daemon), 1)

        harness.write_file(cert, "-----BEGIN CERTIFICATE-----\nbroken\n-----END CERTIFICATE-----\n")
        offset = len(daemon.log())
        daemon.signal(signal.SIGHUP)
        harness.wait_until(lambda: "reload rejected" in daemon.log()[offset:], timeout=10, what="reload rejected")
        log = daemon.log()[offset:]
        self.assertRegex(log, re.escape(daemon.web_config_path) + r":1:32: tls_server_config\.cert_file: holds no "
                                                                   r"PEM certificate")
        harness.wait_until(lambda: self.reload_successful(daemon) == 0, timeout=5,
                           what="jitterd_config_last_reload_successful 0")
        self.assertEqual(served_certificate(daemon.address), original, "the old certificate is no longer served")
        self.assertEqual(https_get(daemon.address)[0], 200)

        # A good new certificate and key: the web server restarts on the same port with them.
        shutil.copy(CERTS.path("server2.crt"), cert)
        shutil.copy(CERTS.path("server2.key"), key)
        restarted = log_count(daemon, r"web server restarted")
        daemon.signal(signal.SIGHUP)
        harness.wait_until(lambda: log_count(daemon, r"web server restarted") > restarted, timeout=10,
                           what=f"the web server to restart; log:\n{daemon.log()}")
        self.assertNotEqual(served_certificate(daemon.address), original)
        self.assertEqual(self.reload_successful(daemon), 1)
        self.stop_ok(daemon)

    def test_check_config_names_the_web_configuration_errors(self):
        path = os.path.join(self.workdir, "web.yml")
        harness.write_file(path, "tls_server_config:\n  cert_file: nope.crt\n  key_file: tls.key\nbasic_auth_user: {}\n")
        config = os.path.join(self.workdir, "jitterd.yaml")
        harness.write_file(config, WEB_CONFIG)
        result = harness.run(["check-config", "--config", config, "--web.config.file", path])
        self.assertEqual(result.returncode, 78, result.stderr)
        self.assertIn(f"{path}:2:14: tls_server_config.cert_file: cannot read {self.workdir}/nope.crt: "
                      f"No such file or directory", result.stderr)
        self.assertIn(f"{path}:4:1: basic_auth_user: unknown key; did you mean \"basic_auth_users\"?", result.stderr)


def openssl_missing():
    return "openssl not found (install the openssl package)" if shutil.which("openssl") is None else None


def make_certificates():
    global CERTS
    directory = tempfile.mkdtemp(prefix="jitterd-tls-")
    CERTS = Certificates(directory)
    return directory


if __name__ == "__main__":
    if openssl_missing() is None:
        certificates = make_certificates()
        try:
            harness.main([harness.require_two_cpus])
        finally:
            shutil.rmtree(certificates, ignore_errors=True)
    else:
        harness.main([openssl_missing])
