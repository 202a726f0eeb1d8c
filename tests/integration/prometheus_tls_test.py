#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""compare --prometheus and fleet against a Prometheus behind HTTPS that asks for a client
certificate (a stand-in on 127.0.0.1, the test's own CA and client CA from tls_test.py): it
answers every query with Prometheus's own error "planted", so reaching it shows as exit 65 naming
that error.
  - without --prometheus-ca-file the server's certificate is not trusted: 69, naming the URL;
  - with the CA but no client certificate the server refuses the handshake: 69;
  - with the CA, --prometheus-cert-file and --prometheus-key-file the query reaches the server: 65
    with its "planted" error, for compare and for fleet;
  - a client certificate without its key, or a key without its certificate: 64 naming both flags.

Usage: prometheus_tls_test.py --jitterd BINARY; exit 77 (skip) without openssl.
"""

import os
import shutil
import ssl
import sys
import tempfile
import unittest

import harness

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "grafana"))
import prometheus_harness  # noqa: E402

EXIT_USAGE, EXIT_DATA, EXIT_UNAVAILABLE = 64, 65, 69


class PlantedError(prometheus_harness.Answering):
    def do_GET(self):
        self.answer(400, {"status": "error", "errorType": "bad_data", "error": "planted"})


class PrometheusTls(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import tls_test
        cls._tmp = tempfile.TemporaryDirectory(prefix="jitterd-prom-tls-")
        cls.certs = tls_test.Certificates(cls._tmp.name)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cls.certs.path("server.crt"), cls.certs.path("server.key"))
        context.load_verify_locations(cls.certs.path("client_ca.crt"))
        context.verify_mode = ssl.CERT_REQUIRED
        cls.server = prometheus_harness.serving(PlantedError, tls=context)
        cls.url = f"https://127.0.0.1:{cls.server.server_address[1]}"

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()
        cls.server.server_close()
        cls._tmp.cleanup()

    def verbs(self, *flags):
        """compare --prometheus and fleet with `flags`, each run's result."""
        common = ["--prometheus", self.url, "--prometheus-timeout", "10s", *flags]
        return [harness.run(["compare", *common, "--instance", "host:9978", "--before", "1700000000/1700000060",
                             "--after", "1700000060/1700000120"], timeout=60),
                harness.run(["fleet", *common, "--range", "1700000000/1700000060", "--by", "kernel"], timeout=60)]

    def assert_exits(self, results, code, *needles):
        for result in results:
            self.assertEqual(result.returncode, code, f"stdout: {result.stdout}\nstderr: {result.stderr}")
            for needle in needles:
                self.assertIn(needle, result.stderr)

    def test_untrusted_server(self):
        self.assert_exits(self.verbs(), EXIT_UNAVAILABLE, self.url)

    def test_no_client_certificate(self):
        self.assert_exits(self.verbs("--prometheus-ca-file", self.certs.path("ca.crt")), EXIT_UNAVAILABLE, self.url)

    def test_client_certificate_reaches_the_server(self):
        self.assert_exits(self.verbs("--prometheus-ca-file", self.certs.path("ca.crt"),
                                     "--prometheus-cert-file", self.certs.path("client.crt"),
                                     "--prometheus-key-file", self.certs.path("client.key")),
                          EXIT_DATA, self.url, "planted")

    def test_certificate_and_key_go_together(self):
        self.assert_exits(self.verbs("--prometheus-cert-file", self.certs.path("client.crt")), EXIT_USAGE,
                          "--prometheus-cert-file", "--prometheus-key-file")
        self.assert_exits(self.verbs("--prometheus-key-file", self.certs.path("client.key")), EXIT_USAGE,
                          "--prometheus-cert-file", "--prometheus-key-file")


if __name__ == "__main__":
    harness.main([lambda: None if shutil.which("openssl") else "openssl not found (install the openssl package)"])
