# SPDX-License-Identifier: Apache-2.0
"""A basic-auth flood against the real jitterd, for auth_flood_test.py and
tests/bench/auth_flood_bench.py: N attacking threads in a process of their own (so that their
work never holds the measuring client's interpreter lock) send wrong passwords, half of them the
same guess again and half new ones, some for a user that does not exist, over keep-alive
connections; one legitimate client scrapes /metrics with the right password meanwhile and times
each scrape.

Run as a script it is the attacking process: `auth_flood.py ADDRESS THREADS SECONDS` prints one
JSON line of what the attackers got ({"401": n, "429": n, ...}) and exits after SECONDS, leaving
requests still waiting unanswered.
"""

import base64
import collections
import http.client
import json
import os
import subprocess
import sys
import threading
import time

# "secret" hashed by libxcrypt's crypt_gensalt("$2y$", cost) and crypt: a scraper's hash at the
# cost exporter-toolkit users choose, and one at the highest cost jitterd accepts.
SECRET_HASH_10 = "$2y$10$dxlvdZgHWwU1qeXaTI2b2utYXCYjKGWCN4v6JZe1hQ2HI/c2iGmly"
SECRET_HASH_14 = "$2y$14$d4UCH6pb4Gi33rDy3o7RDePKD5fBrwZuUSlefqB9VUAyXe5bmRfAy"


def basic(user, password):
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


GOOD = basic("alice", "secret")


def split_address(address):
    host, _, port = address.rpartition(":")
    return host.strip("[]"), int(port)


def percentile(sorted_values, fraction):
    """The value at `fraction` of a sorted list (nearest rank); nan when empty."""
    if not sorted_values:
        return float("nan")
    return sorted_values[min(len(sorted_values) - 1, int(fraction * len(sorted_values)))]


def _attacker(address, index, deadline, counts, lock):
    host, port = split_address(address)
    connection = None
    attempt = 0
    while time.monotonic() < deadline:
        attempt += 1
        user = "mallory" if attempt % 5 == 0 else "alice"
        # Even attempts repeat this thread's first guess; odd ones are always new.
        password = f"guess-{index}" if attempt % 2 == 0 else f"guess-{index}-{attempt}"
        try:
            if connection is None:
                connection = http.client.HTTPConnection(host, port, timeout=max(1.0, deadline - time.monotonic()))
            connection.request("GET", "/metrics", headers={"Authorization": basic(user, password)})
            response = connection.getresponse()
            response.read()
            outcome = str(response.status)
            if response.getheader("Connection", "").lower() == "close":
                connection.close()
                connection = None
        except (OSError, http.client.HTTPException) as error:
            outcome = type(error).__name__
            if connection is not None:
                connection.close()
            connection = None
        with lock:
            counts[outcome] += 1


def attack(address, threads, seconds):
    """The attacking process's work: returns {outcome: count}."""
    deadline = time.monotonic() + seconds
    counts = collections.Counter()
    lock = threading.Lock()
    workers = [threading.Thread(target=_attacker, args=(address, i, deadline, counts, lock), daemon=True)
               for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(max(0.0, deadline - time.monotonic()) + 0.5)
    with lock:
        return dict(counts)


class Flood:
    """`threads` attackers against `address` for `seconds`, in a child process; result() gives what
    they got. With 0 threads nothing is started."""

    def __init__(self, address, threads, seconds):
        self.threads = threads
        self.process = None
        if threads > 0:
            self.process = subprocess.Popen([sys.executable, os.path.abspath(__file__), address, str(threads),
                                             str(seconds)], stdout=subprocess.PIPE, text=True)

    def result(self, timeout=60):
        if self.process is None:
            return {}
        out, _ = self.process.communicate(timeout=timeout)
        return json.loads(out.strip().splitlines()[-1]) if out.strip() else {}

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(5)


def scrape(address, seconds, interval=0.01, timeout=15.0, authorization=GOOD):
    """The legitimate client: GET /metrics over one keep-alive connection (reopened when it
    fails or the server closes it) every `interval` for `seconds`. Returns (latencies of the
    successful scrapes in seconds, sorted; failures as text)."""
    host, port = split_address(address)
    connection = None
    latencies, failures = [], []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        started = time.monotonic()
        try:
            if connection is None:
                connection = http.client.HTTPConnection(host, port, timeout=timeout)
            connection.request("GET", "/metrics", headers={"Authorization": authorization})
            response = connection.getresponse()
            body = response.read()
            elapsed = time.monotonic() - started
            if response.status == 200 and b"jitterd_build_info" in body:
                latencies.append(elapsed)
            else:
                failures.append(f"HTTP {response.status} after {elapsed:.3f} s")
            if response.getheader("Connection", "").lower() == "close":
                connection.close()
                connection = None
        except (OSError, http.client.HTTPException) as error:
            failures.append(f"{error!r} after {time.monotonic() - started:.3f} s")
            if connection is not None:
                connection.close()
            connection = None
        time.sleep(interval)
    if connection is not None:
        connection.close()
    return sorted(latencies), failures


def summary(latencies, failures):
    return (f"{len(latencies)} scrapes, {len(failures)} failed; p50 {percentile(latencies, 0.5) * 1e3:.1f} ms, "
            f"p99 {percentile(latencies, 0.99) * 1e3:.1f} ms, max {(latencies[-1] if latencies else float('nan')) * 1e3:.1f} ms")


if __name__ == "__main__":
    print(json.dumps(attack(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]))), flush=True)
    os._exit(0)  # attackers still waiting for an answer are abandoned
