#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`jitterd report TOPIC --from URL`: the running daemon's view, read from its /status.json.

- Every topic from a real daemon (a sampling one for gaps and the probes, a watching one with a
  loop for watch and loops): the report's figures are the daemon's, exactly: read between two
  /status.json reads of the same window (gaps, loops) or the same probe run (the tables), the
  report's values equal the page's; its window is the daemon's configured one (12 s, not the 10 s
  a fresh report samples); the table output names the daemon, and a table only the daemon has
  (the application's threads, the loop's window) is there.
- A fresh reading says it is one and prints the command for the daemon's view, which works.
- What goes wrong is named with the URL: connection refused, a timeout, HTTP 404, a redirect, an
  answer that is not JSON or not a status page, an older daemon without a field, an answer over
  --from-max-bytes; and a daemon with TLS and basic auth: 401 without credentials, an untrusted
  certificate without --from-ca-file, the view with both.

Usage: report_from_test.py --jitterd BINARY --poll-loop BINARY [unittest args]; exit 77 (skip)
with fewer than 2 CPUs.
"""

import argparse
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import threading

import harness

POLL_LOOP = None
EXIT_OK, EXIT_DATA, EXIT_UNAVAILABLE, EXIT_USAGE = 0, 65, 69, 64

# Samples cpu 1 (auto on two CPUs) over a 12 s window, every probe on, quick.
SAMPLING_CONFIG = harness.BURST_CONFIG.replace("  window: 10s\n", "  window: 12s\n")


# The loops' section changes at every loops.interval: 2 s, so that a report and the two page reads
# around it fit in one reading (at 200 ms, the ASan build beside two CPU hogs missed 30 of 30).
def watching_config(loops_dir):
    return f"""\
cpus: []
sampler:
  window: 12s
web:
  listen_address: "127.0.0.1:0"
application:
  tasks: ["poll_loop"]
watch:
  cpus: "1"
  method: counts
  interval: 500ms
loops:
  directory: {loops_dir}
  interval: 2s
{harness.PROBES_OFF}"""


def get_json(url):
    status, body = harness.http_get(url)
    if status != 200:
        raise AssertionError(f"GET {url}: HTTP {status}")
    return json.loads(body)


def report(*args, timeout=30):
    return harness.run(["report", *args], timeout=timeout)


def probe_entry(document, name):
    return next(p for p in document["probes"] if p["name"] == name)


class Server:
    """A loopback HTTP server answering every GET with `handler(request)`: the hostile side."""

    def __init__(self, answer):
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (the standard library's name)
                answer(self)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def reply(status, body, headers=()):
    def answer(handler):
        data = body.encode() if isinstance(body, str) else body
        handler.send_response(status)
        for name, value in headers:
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
    return answer


class ReportFromTest(harness.DaemonTestCase):
    def assertExit(self, result, code):
        self.assertEqual(result.returncode, code, f"exit {result.returncode}; stderr:\n{result.stderr}\n"
                                                  f"stdout:\n{result.stdout[-2000:]}")

    def assert_refused(self, result, code, *texts):
        self.assertExit(result, code)
        for text in texts:
            self.assertIn(text, result.stderr)
        self.assertNotIn("Traceback", result.stderr)

    def serve(self, answer):
        server = Server(answer)
        self.addCleanup(server.close)
        return server.url

    def same_window(self, daemon, run):
        """run() between two /status.json reads of the same window: (before, what run returned)."""
        for _ in range(30):
            before = get_json(daemon.url("/status.json"))
            result = run()
            after = get_json(daemon.url("/status.json"))
            if before["window"]["sequence"] == after["window"]["sequence"] and \
                    json.dumps(before["loops"]) == json.dumps(after["loops"]):
                return after, result
        self.fail("the window moved during every one of 30 reports")

    def same_run(self, daemon, name, run):
        """run() between two /status.json reads of the same run of probe `name`."""
        for _ in range(30):
            before = probe_entry(get_json(daemon.url("/status.json")), name)
            result = run()
            after = probe_entry(get_json(daemon.url("/status.json")), name)
            if before == after or before.get("last_run_unix_seconds") == after.get("last_run_unix_seconds"):
                return after, result
        self.fail(f"probe {name} ran again during every one of 30 reports")

    def wait_probes_ran(self, daemon, names, timeout=60):
        def ran():
            document = get_json(daemon.url("/status.json"))
            return all(probe_entry(document, n).get("ran") for n in names)
        harness.wait_until(ran, timeout, interval=0.5, what=f"probes {names} to run once")

    def test_gaps_and_every_probe_from_a_sampling_daemon(self):
        daemon = self.daemon(SAMPLING_CONFIG)
        base = f"http://{daemon.address}"
        document = get_json(daemon.url("/status.json"))
        names = [p["name"] for p in document["probes"]]
        self.wait_probes_ran(daemon, names)
        harness.wait_until(lambda: get_json(daemon.url("/status.json"))["cpus"][0]["window"], 15,
                           what="the first window")

        # gaps: the window's figures, exactly, and the daemon's window length.
        page, result = self.same_window(daemon, lambda: report("--from", base, "--format", "json"))
        self.assertExit(result, EXIT_OK)
        got = json.loads(result.stdout)
        self.assertEqual(got["from"]["window_sequence"], page["window"]["sequence"])
        self.assertEqual(got["from"]["window_seconds"], 12)
        self.assertEqual(got["from"]["url"], base + "/status.json")
        cpu = page["cpus"][0]
        row = next(r for r in got["cpus"] if r["cpu"] == cpu["cpu"])
        for field in ("p50", "p99", "p99_9", "p99_99", "max"):
            self.assertAlmostEqual(row[f"{field}_ns"], cpu["window"][f"{field}_seconds"] * 1e9, places=3, msg=field)
        self.assertEqual(row["samples"], cpu["window"]["samples"])
        self.assertEqual(row["window_seconds"], cpu["window"]["seconds"])
        page, table = self.same_window(daemon, lambda: report("--from", base + "/"))
        self.assertExit(table, EXIT_OK)
        self.assertTrue(table.stdout.startswith(f"the running daemon's view, from {base}/status.json: jitterd "),
                        table.stdout[:200])
        self.assertIn("rolling window of 12 s", table.stdout)
        self.assertIn(f"{page['cpus'][0]['window']['p99_seconds'] * 1e9:.1f}", table.stdout)

        # Every probe: the tables of the run the page shows, as the page holds them.
        for name in names:
            with self.subTest(topic=name):
                entry, result = self.same_run(daemon, name, lambda: report(name, "--from", base, "--format", "json"))
                if name == "posture":
                    worst = max(({"PASS": 0, "WARN": 1, "FAIL": 2}.get(row[0], -1)
                                 for t in entry["tables"] if t["columns"][:1] == ["status"] for row in t["rows"]),
                                default=3)
                    self.assertExit(result, worst if worst >= 0 else 3)
                else:
                    self.assertExit(result, EXIT_OK if entry["success"] else 1)
                got = json.loads(result.stdout)
                self.assertEqual(got["probe"], name)
                self.assertEqual(got["tables"], entry["tables"])
                self.assertEqual(got["notes"], entry["notes"])
                self.assertEqual(got["from"]["window_seconds"], 12)
                text = report(name, "--from", base)
                self.assertIn(f"probe {name}: last run ", text.stdout)
                for table in entry["tables"]:
                    self.assertIn(table["title"], text.stdout)
                csv_text = report(name, "--from", base, "--format", "csv")
                if entry["tables"]:
                    self.assertTrue(csv_text.stdout.startswith(",".join(entry["tables"][0]["columns"])))
        self.stop_ok(daemon)

    def test_watch_and_loops_from_a_watching_daemon(self):
        if not shutil.which(POLL_LOOP):
            self.skipTest("no poll_loop example")
        loops_dir = os.path.join(self.workdir, "loops")
        os.mkdir(loops_dir)
        loop = subprocess.Popen([POLL_LOOP, "rx0", "1", "0", "nic=eth0"], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, env=dict(os.environ, JITTERD_LOOP_DIR=loops_dir))
        self.addCleanup(lambda: (loop.kill(), loop.wait(10)))
        daemon = self.daemon(watching_config(loops_dir))
        base = f"http://{daemon.address}"

        def loop_has_window():
            loops = get_json(daemon.url("/status.json"))["loops"]
            return loops and loops["loops"] and loops["loops"][0]["window"]
        harness.wait_until(loop_has_window, 20, interval=0.2, what="the loop's first window")
        self.wait_probes_ran(daemon, ["watch"])

        entry, result = self.same_run(daemon, "watch", lambda: report("watch", "--from", base, "--format", "json"))
        self.assertExit(result, EXIT_OK)
        got = json.loads(result.stdout)
        # The probe's tables as the daemon holds them, and after the headline its stolen-time plots
        # as a table: a row per plot in the same /status.json.
        stolen = [t for t in got["tables"] if t["title"].startswith("stolen time over the window")]
        self.assertEqual([t for t in got["tables"] if t not in stolen], entry["tables"])
        self.assertEqual(len(stolen), 1, "the stolen-time plots after the headline")
        self.assertEqual(got["tables"][1], stolen[0])
        self.assertEqual([r[0] for r in stolen[0]["rows"]], [p["cpu"] for p in entry["stolen"]])
        threads = next(t for t in got["tables"] if t["title"].startswith("the application's threads"))
        self.assertTrue(threads["rows"], "the daemon's threads table is empty: the application was not found")
        self.assertIn("poll_loop", json.dumps(threads["rows"]))

        page, result = self.same_window(daemon, lambda: report("loops", "--from", base, "--format", "json"))
        self.assertExit(result, EXIT_OK)
        got = json.loads(result.stdout)
        window = next(t for t in got["tables"] if t["title"].startswith("loops, over"))
        row = dict(zip(window["columns"], window["rows"][0]))
        expected = page["loops"]["loops"][0]
        self.assertEqual(row["loop"], "rx0")
        self.assertEqual(row["labels"], "nic=eth0")
        self.assertAlmostEqual(row["p99_ns"], expected["window"]["p99_seconds"] * 1e9, places=3)
        self.assertEqual(row["samples"], expected["window"]["samples"])
        self.assertEqual(row["gaps_total"], expected["gaps"])
        text = report("loops", "--from", base)
        self.assertIn("loops, over the daemon's rolling window", text.stdout)
        self.assertIn("rx0", text.stdout)
        # gaps from a daemon that samples nothing: an empty table, said plainly.
        self.assertExit(report("--from", base), EXIT_OK)
        # A topic it does not run: 69, naming what it runs.
        self.assert_refused(report("c2c", "--from", base), EXIT_UNAVAILABLE, base, "runs no c2c probe")
        self.stop_ok(daemon)

    def test_a_fresh_reading_says_so_and_names_the_daemons_view(self):
        daemon = self.daemon(SAMPLING_CONFIG)
        port = daemon.address.rpartition(":")[2]
        config = os.path.join(self.workdir, "fixed.yaml")
        harness.write_file(config, SAMPLING_CONFIG.replace("127.0.0.1:0", f"127.0.0.1:{port}"))
        fresh = report("kernel_cost", "--config", config, timeout=60)
        self.assertExit(fresh, EXIT_OK)
        first = fresh.stdout.splitlines()[0]
        self.assertIn("a fresh reading, taken now by this process", first)
        command = first.rpartition("the running daemon's view: ")[2]
        self.assertEqual(command, f"jitterd report kernel_cost --from http://127.0.0.1:{port}")
        self.wait_probes_ran(daemon, ["kernel_cost"])
        view = harness.run(command.split()[1:], timeout=30)
        self.assertExit(view, EXIT_OK)
        self.assertIn("the running daemon's view", view.stdout)
        gaps = report("--config", config, "--duration", "200ms", timeout=60)
        self.assertIn(f"jitterd report --from http://127.0.0.1:{port}", gaps.stdout.splitlines()[0])
        self.stop_ok(daemon)

    def test_what_goes_wrong_is_named_with_the_url(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            closed = f"http://127.0.0.1:{s.getsockname()[1]}"
        self.assert_refused(report("--from", closed), EXIT_UNAVAILABLE, closed + "/status.json", "no answer",
                            "Failed to connect")
        # A server that accepts and never answers.
        silent = socket.socket()
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        self.addCleanup(silent.close)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        self.assert_refused(report("--from", url, "--from-timeout", "500ms"), EXIT_UNAVAILABLE, url, "no answer",
                            "timed out")
        missing = self.serve(reply(404, "404 page not found"))
        self.assert_refused(report("watch", "--from", missing), EXIT_UNAVAILABLE, missing + "/status.json",
                            "HTTP status 404")
        moved = self.serve(reply(302, "", [("Location", "http://elsewhere.example/")]))
        self.assert_refused(report("--from", moved), EXIT_UNAVAILABLE, "a redirect to http://elsewhere.example/",
                            "not followed")
        garbage = self.serve(reply(200, "\x1b[2Jhello <html>"))
        self.assert_refused(report("--from", garbage), EXIT_DATA, garbage, "not JSON", "\\x1b[2Jhello")
        shape = self.serve(reply(200, '{"status": "success", "data": []}'))
        self.assert_refused(report("--from", shape), EXIT_DATA, shape, "not a jitterd's /status.json")
        big = self.serve(reply(200, "[" + "0," * 2000 + "0]"))
        self.assert_refused(report("--from", big, "--from-max-bytes", "1KiB"), EXIT_UNAVAILABLE,
                            "larger than the limit of 1024 bytes", "--from-max-bytes")

        # An older daemon: its real page without a field the topic needs.
        daemon = self.daemon(SAMPLING_CONFIG)
        harness.wait_until(lambda: get_json(daemon.url("/status.json"))["cpus"][0]["window"], 15,
                           what="the first window")
        page = get_json(daemon.url("/status.json"))
        del page["cpus"][0]["window"]["p99_9_seconds"]
        old = self.serve(reply(200, json.dumps(page)))
        self.assert_refused(report("--from", old), EXIT_DATA, old, 'cpus[0].window: missing field "p99_9_seconds"',
                            f"the daemon runs jitterd {page['jitterd_version']}")
        for args, flag in ((["--from", "ftp://x"], "--from: must be an http"),
                           (["--from-timeout", "1s"], "--from-timeout: only with --from"),
                           (["--from", "http://x", "--duration", "1s"], "--duration: not with --from"),
                           (["--from", "http://x", "--format", "html"], "--format html: not with --from"),
                           (["--from", "http://x", "--from-ca-file", "/dev/null"], "only with --from https://"),
                           (["--from", "http://x", "--from-basic-auth-user", "a"], "give both or neither"),
                           (["--from", "http://alice:secret@x/"], "no user or password in the URL")):
            with self.subTest(args=args):
                self.assert_refused(report(*args), EXIT_USAGE, flag)
        self.stop_ok(daemon)

    def test_a_daemon_with_tls_and_basic_auth(self):
        if shutil.which("openssl") is None:
            self.skipTest("openssl not found (install the openssl package)")
        import tls_test
        from web_test import SECRET_HASH
        certs = tls_test.Certificates(self.workdir)
        web = os.path.join(self.workdir, "web.yml")
        harness.write_file(web, f"tls_server_config:\n  cert_file: {certs.path('server.crt')}\n"
                                f"  key_file: {certs.path('server.key')}\nbasic_auth_users:\n  alice: {SECRET_HASH}\n")
        daemon = self.daemon(SAMPLING_CONFIG, args=["--web.config.file", web])
        url = f"https://{daemon.address}"
        password = os.path.join(self.workdir, "password")
        harness.write_file(password, "secret\n")
        wrong = os.path.join(self.workdir, "wrong")
        harness.write_file(wrong, "guess\n")
        ca = ["--from-ca-file", certs.path("ca.crt")]
        self.assert_refused(report("--from", url), EXIT_UNAVAILABLE, url, "no answer")  # untrusted certificate
        self.assert_refused(report("--from", url, *ca), EXIT_UNAVAILABLE, url, "HTTP status 401",
                            "--from-basic-auth-user")
        self.assert_refused(report("--from", url, *ca, "--from-basic-auth-user", "alice",
                                   "--from-basic-auth-password-file", wrong), EXIT_UNAVAILABLE, "HTTP status 401")
        harness.wait_until(lambda: report("--from", url, *ca, "--from-basic-auth-user", "alice",
                                          "--from-basic-auth-password-file", password, "--format", "json")
                           .returncode == 0, 15, interval=0.5, what="the first window over TLS")
        result = report("--from", url, *ca, "--from-basic-auth-user", "alice", "--from-basic-auth-password-file",
                        password, "--format", "json")
        self.assertExit(result, EXIT_OK)
        self.assertEqual(json.loads(result.stdout)["from"]["window_seconds"], 12)
        self.assertNotIn("secret", result.stdout + result.stderr)
        self.stop_ok(daemon)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--poll-loop", required=True)
    own, rest = parser.parse_known_args()
    POLL_LOOP = os.path.realpath(own.poll_loop)
    sys.argv = [sys.argv[0]] + rest
    harness.main([harness.require_two_cpus])
