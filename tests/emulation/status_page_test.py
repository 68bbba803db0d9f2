#!/usr/bin/env python3
"""The operator's status page (config "status_listen", host_server/status/) in a real headless
browser, during and after emulated rounds.

One fedstat-server serves three trusted kl tasks that measure the same thing (one series: the
same kind, trust and reference), ten emulated devices each (fedstat-sim). Round 1 is loaded
while six of its devices wait in admission: Debian's chromium (--headless --dump-dom) must show
task 1 "running" with six devices accepted, and a screenshot is taken. Four more devices (some
dropping out before their report) complete it; rounds 2 and 3 follow. Then the page must show
the three rounds "completed", their dropouts as the devices report them, and the series' chart
one <circle class="estimate-point"> per published round; the screenshot is a real PNG. /metrics
must be Prometheus text whose values agree with the rounds (check-ins ≥ devices, 3 completed,
each task's contributors and estimate as `fedstat-server results` prints them). The HTTP server's
limits answer as documented (404, 405, 400, 421 for a foreign Host, 431, HEAD, a silent client
closed). The reference
file's name carries HTML metacharacters: the page must show it escaped. Without status_listen the
server listens on its device port only; a non-loopback status_listen is refused.

usage: status_page_test.py SERVER SIM WORKDIR [--chromium PATH]
Exit 0 when every check held. Synchronisation is by polling with deadlines, never by sleeping.
"""
import argparse
import html.parser
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
import urllib.error
import urllib.request

FLEET_SECRET = "5a" * 32  # the emulation fleets' HKDF secret (tests/emulation/common.sh)
REFERENCE = 'ref<b>&"1".txt'  # a file name the page must escape
STARTED = time.monotonic()


def say(*args):
    print("[%6.1fs]" % (time.monotonic() - STARTED), *args, flush=True)


def poll(what, check, timeout=60.0, interval=0.05):
    """check() until it returns something truthy; fails after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = check()
        except (OSError, urllib.error.URLError, ValueError) as e:
            last = e
        else:
            if last:
                return last
        time.sleep(interval)  # polling with a deadline, not a synchronisation by sleep
    sys.exit("status_page_test: timed out waiting for %s (last: %r)" % (what, last))


def http(port, path, method="GET"):
    request = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


def raw(port, data, timeout=10.0):
    """Sends `data` on a fresh connection, returns everything until the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        try:
            s.sendall(data)
        except OSError:
            pass
        out = b""
        while True:
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            out += chunk
        return out


class Dom(html.parser.HTMLParser):
    """The parts of the status page the test reads: the task rows' cells and the charts' points."""

    def __init__(self, text):
        super().__init__()
        self.rows, self.points, self.charts = {}, {}, []
        self._row, self._cell, self._chart = None, None, None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr" and a.get("data-task"):
            self._row = {"state": a.get("data-state"), "cells": [], "classes": {}}
            self.rows[int(a["data-task"])] = self._row
        elif tag == "td" and self._row is not None:
            self._cell = [a.get("class") or "", ""]
        elif tag == "svg" and "chart" in (a.get("class") or ""):
            self._chart = a.get("id")
            self.charts.append(self._chart)
            self.points[self._chart] = []
        elif tag == "circle" and self._chart and "estimate-point" in (a.get("class") or ""):
            self.points[self._chart].append(int(a["data-task"]))

    def handle_endtag(self, tag):
        if tag == "td" and self._cell is not None and self._row is not None:
            self._row["cells"].append(self._cell[1].strip())
            for c in self._cell[0].split():
                self._row["classes"][c] = self._cell[1].strip()
            self._cell = None
        elif tag == "tr":
            self._row = None
        elif tag == "svg":
            self._chart = None

    def handle_data(self, data):
        if self._cell is not None and not self._cell[1]:
            self._cell[1] = data  # the cell's first text (a detail line may follow)


def chromium_dom(chromium, work, url):
    out = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--user-data-dir=" + os.path.join(work, "chromium-profile"), "--dump-dom", url],
        capture_output=True, text=True, timeout=120)
    if out.returncode != 0 or "<table" not in out.stdout:
        sys.exit("status_page_test: chromium --dump-dom failed (%d): %s" %
                 (out.returncode, out.stderr[-2000:]))
    return out.stdout


def chromium_screenshot(chromium, work, url, path):
    if os.path.exists(path):
        os.remove(path)
    out = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--hide-scrollbars", "--user-data-dir=" + os.path.join(work, "chromium-profile"),
         "--screenshot=" + path, "--window-size=1200,900", url],
        capture_output=True, text=True, timeout=120)
    if out.returncode != 0 or not os.path.exists(path):
        sys.exit("status_page_test: chromium --screenshot failed (%d): %s" %
                 (out.returncode, out.stderr[-2000:]))
    with open(path, "rb") as f:
        png = f.read()
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", png[16:24])  # IHDR
    assert (width, height) == (1200, 900), (width, height)
    assert len(png) > 20000, "a blank page? %d bytes" % len(png)
    say("screenshot", path, "%dx%d, %d bytes" % (width, height, len(png)))


def listening_ports(pid):
    """The TCP ports process `pid` listens on (from /proc: its socket inodes in LISTEN state)."""
    inodes = set()
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            target = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        m = re.match(r"socket:\[(\d+)\]", target)
        if m:
            inodes.add(m.group(1))
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                    ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


METRIC = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*"'
                    r'(?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*")*)?\})? '
                    r'(-?[0-9.eE+-]+|NaN|[+-]Inf)$')


def parse_metrics(text):
    """Prometheus text exposition format 0.0.4 → {(name, labels): value}; any other line fails."""
    samples, typed = {}, {}
    for line in text.splitlines():
        if not line:
            continue
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            parts = line.split(" ", 3)
            assert len(parts) == 4 and parts[3], line
            if parts[1] == "TYPE":
                assert parts[3] in ("counter", "gauge", "untyped", "summary", "histogram"), line
                typed[parts[2]] = parts[3]
            continue
        assert not line.startswith("#"), line
        m = METRIC.match(line)
        assert m, "not a Prometheus sample line: %r" % line
        name, labels = m.group(1), m.group(3) or ""
        assert name in typed, "sample before its TYPE: %r" % line
        key = (name, tuple(sorted(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"',
                                             labels))))
        assert key not in samples, "duplicate sample %r" % line
        samples[key] = float(m.group(4))
    return samples, typed


def metric(samples, name, **labels):
    for (n, ls), v in samples.items():
        if n == name and all(dict(ls).get(k) == str(x) for k, x in labels.items()):
            return v
    return None


def start_server(server, work, config_name):
    port_file = os.path.join(work, config_name + ".port")
    log_path = os.path.join(work, config_name + ".log")
    log = open(log_path, "w")
    proc = subprocess.Popen([server, "--config", config_name + ".json", "--port-file", port_file],
                            cwd=work, stderr=log)

    def ready():
        if proc.poll() is not None:
            sys.exit("status_page_test: fedstat-server exited: " + open(log_path).read())
        return os.path.exists(port_file) and os.path.getsize(port_file) > 0

    poll("the server to listen", ready, timeout=60)
    with open(port_file) as f:
        return proc, int(f.read()), log_path


def stop_server(proc, log_path):
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(timeout=60)
    text = open(log_path).read()
    assert code == 0, "fedstat-server exited %d: %s" % (code, text[-4000:])
    assert '"event":"stopped"' in text and '"integrity":"ok"' in text, text[-2000:]


def sim(binary, work, port, task_file, clients, first_id, dropout, seed, background=False):
    args = [binary, "--server", "127.0.0.1:%d" % port, "--clients", str(clients), "--task",
            task_file, "--data", "data", "--fleet-secret", FLEET_SECRET, "--dropout", str(dropout),
            "--seed", str(seed), "--first-id", str(first_id), "--state", "state", "--json"]
    out = open(os.path.join(work, "sim-%d.json" % first_id), "w")
    proc = subprocess.Popen(args, cwd=work, stdout=out, stderr=subprocess.PIPE, text=True)
    if background:
        return proc
    return finish_sim(proc, work, first_id)


def finish_sim(proc, work, first_id):
    _, err = proc.communicate(timeout=600)
    if proc.returncode != 0:
        sys.exit("status_page_test: fedstat-sim failed: " + err)
    with open(os.path.join(work, "sim-%d.json" % first_id)) as f:
        return json.load(f)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("server")
    parser.add_argument("sim")
    parser.add_argument("work")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    args = parser.parse_args()
    server, work = os.path.abspath(args.server), os.path.abspath(args.work)
    sim_binary = os.path.abspath(args.sim)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "data"))
    os.makedirs(os.path.join(work, "state"))
    os.chdir(work)

    # The fleet: a Zipf law shifted by 15 ids; the reference (Π) is the unshifted law.
    with open("data/items.txt", "w") as f:
        for i in range(300):
            f.write("%d %d\n" % (i + 15, max(1, 100000 // (i + 1))))
    with open(REFERENCE, "w") as f:
        for i in range(320):
            f.write("%d %d\n" % (i, max(1, 100000 // (i + 1))))
    tasks = []
    for k in (1, 2, 3):  # one series: the same kl measurement, three rounds
        tasks.append({"id": k, "kind": "kl", "trust": "trusted", "epsilon": 1.0, "delta": 1e-6,
                      "min_clients": 5, "max_clients": 10, "deadline_seconds": 900,
                      "admission_seconds": 600, "phase_timeout_seconds": 8,
                      "seed": "%064x" % (0x5157a7 + k),
                      "kl": {"reference": REFERENCE, "rounds": 300, "lambda": 0.1}})
        with open("task-%d.json" % k, "w") as f:
            json.dump(tasks[-1], f)
    base = {"listen": "127.0.0.1:0", "store": "server.db", "fleet_secret": FLEET_SECRET,
            "tasks": tasks}

    # A status page on another address than loopback is refused (it has no authentication).
    with open("public.json", "w") as f:
        json.dump(dict(base, store="public.db", status_listen="0.0.0.0:0"), f)
    refused = subprocess.run([server, "--config", "public.json"], capture_output=True, text=True,
                             timeout=60)
    assert refused.returncode == 2 and "loopback" in refused.stderr, (refused.returncode,
                                                                      refused.stderr)
    say("a non-loopback status_listen is refused:", refused.stderr.strip())

    # Off by default: without status_listen the server listens on its device port only.
    with open("off.json", "w") as f:
        json.dump(dict(base, store="off.db"), f)
    off, off_port, off_log = start_server(server, work, "off")
    ports = listening_ports(off.pid)
    assert ports == {off_port}, (ports, off_port)
    assert "status_listening" not in open(off_log).read()
    stop_server(off, off_log)
    say("without status_listen: listening on", sorted(ports), "only")

    with open("server.json", "w") as f:
        json.dump(dict(base, status_listen="127.0.0.1:0"), f)
    proc, port, log_path = start_server(server, work, "server")
    line = poll("the status_listening log line", lambda: next(
        (json.loads(l) for l in open(log_path) if '"status_listening"' in l), None))
    status_port = line["port"]
    url = "http://127.0.0.1:%d/" % status_port
    assert listening_ports(proc.pid) == {port, status_port}, listening_ports(proc.pid)
    say("status page at", url, "(devices at port %d)" % port)
    try:
        check_http(status_port)
        run_rounds(args.chromium, sim_binary, server, work, port, status_port, url)
    finally:
        if proc.poll() is None:
            stop_server(proc, log_path)
    say("passed")


def check_http(port):
    status, headers, body = http(port, "/")
    assert status == 200 and headers["Content-Type"].startswith("text/html"), (status, headers)
    assert headers["Connection"] == "close" and "<script" not in body.lower(), "no script"
    assert "script-src" not in headers["Content-Security-Policy"], headers
    assert "&lt;b&gt;&amp;&quot;1&quot;.txt" in body and REFERENCE not in body, \
        "the reference's name must be HTML-escaped"
    status, headers, body = http(port, "/metrics")
    assert status == 200 and headers["Content-Type"].startswith("text/plain; version=0.0.4"), (
        status, headers)
    assert http(port, "/nope")[0] == 404
    status, headers, _ = http(port, "/", method="POST")
    assert status == 405 and headers.get("Allow") == "GET, HEAD", (status, headers)
    own = b"127.0.0.1:%d" % port
    head = raw(port, b"HEAD / HTTP/1.1\r\nHost: " + own + b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 ") and head.endswith(b"\r\n\r\n"), head[:200]
    # DNS rebinding: a page whose own name points at 127.0.0.1 sends its own name as Host; the
    # server answers 421 and nothing of the page. No Host at all is refused the same way.
    for host in (b"Host: evil.example:%d\r\n" % port, b"host: 127.0.0.1:1\r\n", b""):
        answer = raw(port, b"GET / HTTP/1.1\r\n" + host + b"\r\n")
        assert answer.startswith(b"HTTP/1.1 421 ") and b"fedstat" not in answer, answer[:200]
    assert raw(port, b"GET /metrics HTTP/1.1\r\nHOST:  localhost:%d \r\n\r\n" % port) \
        .startswith(b"HTTP/1.1 200 "), "Host is case-insensitive, blanks around it ignored"
    assert raw(port, b"GARBAGE\r\n\r\n").startswith(b"HTTP/1.1 400 ")
    assert raw(port, b"GET http://x/ HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 400 ")
    big = b"GET / HTTP/1.1\r\nX-Fill: " + b"a" * 9000 + b"\r\n\r\n"
    assert raw(port, big).startswith(b"HTTP/1.1 431 "), "an oversized request head"
    # A client that sends nothing is closed by the server's read time-out (5 s), unanswered.
    t0 = time.monotonic()
    assert raw(port, b"", timeout=30) == b""
    waited = time.monotonic() - t0
    assert 3 < waited < 20, waited
    say("HTTP limits: 404, 405 (Allow), HEAD, 400, 421 (foreign Host), 431; a silent client "
        "closed after %.1f s"
        % waited)


def run_rounds(chromium, sim_binary, server, work, port, status_port, url):
    page = lambda: Dom(http(status_port, "/")[2])

    # Round 1, during: six devices accepted, waiting for admission to fill (max 10).
    first = sim(sim_binary, work, port, "task-1.json", 6, 1, 0.0, 17, background=True)
    poll("six devices accepted in round 1",
         lambda: (lambda r: r and r["classes"].get("accepted") == "6")(page().rows.get(1)),
         timeout=120)
    dom = Dom(chromium_dom(chromium, work, url))
    row = dom.rows[1]
    assert row["state"] == "running" and row["classes"]["state"] == "running", row
    assert row["classes"]["accepted"] == "6" and row["classes"]["checked-in"] == "6", row
    assert row["cells"][5].startswith("admission"), row  # task, kind, trust, ε, state, stage
    assert dom.points and all(not p for p in dom.points.values()), dom.points
    say("chromium, during round 1:", row["cells"])
    chromium_screenshot(chromium, work, url, os.path.join(work, "status_running.png"))

    # Four more fill it; some drop out before their report.
    second = sim(sim_binary, work, port, "task-1.json", 4, 101, 0.75, 5)
    first = finish_sim(first, work, 1)
    dropped = first["outcomes"].get("dropped", 0) + second["outcomes"].get("dropped", 0)
    say("round 1: outcomes", first["outcomes"], second["outcomes"])
    for k, first_id in ((2, 201), (3, 301)):
        out = sim(sim_binary, work, port, "task-%d.json" % k, 10, first_id, 0.0, 17)
        assert out["outcomes"] == {"completed": 10}, out["outcomes"]

    results = {}
    for k in (1, 2, 3):
        got = subprocess.run([server, "results", str(k), "--config", "server.json", "--json"],
                             capture_output=True, text=True, cwd=work, timeout=60)
        assert got.returncode == 0, got.stderr
        results[k] = json.loads(got.stdout)
    assert results[1]["contributors"] == 10 - dropped, (results[1], dropped)

    poll("three completed rounds on the page",
         lambda: all(r["state"] == "completed" for r in page().rows.values()), timeout=60)
    dom = Dom(chromium_dom(chromium, work, url))
    assert sorted(dom.rows) == [1, 2, 3], dom.rows
    for k, row in dom.rows.items():
        assert row["state"] == "completed" and row["classes"]["state"] == "completed", row
        assert int(row["classes"]["contributors"]) == results[k]["contributors"], (row, results)
        assert abs(float(row["classes"]["estimate"].split()[0]) - results[k]["estimate"]) <= \
            1e-5 * max(1, abs(results[k]["estimate"])), (row, results[k])
    assert dom.rows[1]["classes"]["dropouts"] == str(dropped), (dom.rows[1], dropped)
    assert dom.rows[1]["classes"]["accepted"] == "10", dom.rows[1]
    assert len(dom.charts) == 1, dom.charts  # one series
    assert dom.points[dom.charts[0]] == [1, 2, 3], dom.points
    say("chromium, after: rows", {k: r["cells"] for k, r in dom.rows.items()})
    say("chart points (tasks):", dom.points)
    chromium_screenshot(chromium, work, url, os.path.join(work, "status_completed.png"))

    status, _, text = http(status_port, "/metrics")
    assert status == 200
    samples, typed = parse_metrics(text)
    devices = 6 + 4 + 10 + 10
    assert typed["fedstat_checkins_total"] == "counter"
    assert metric(samples, "fedstat_checkins_total") >= devices, text
    assert metric(samples, "fedstat_connections_total") >= devices, text
    assert 0 <= metric(samples, "fedstat_connections_open") <= devices, text
    # Each device id's full handshake leaves one session held for resumption (one per id, 1 h),
    # and resumed handshakes are some of the completed ones.
    assert typed["fedstat_tls_resumed_handshakes_total"] == "counter"
    assert 1 <= metric(samples, "fedstat_tls_sessions_held") <= devices, text
    assert metric(samples, "fedstat_tls_resumed_handshakes_total") <= \
        metric(samples, "fedstat_connections_total"), text
    # The page's overview shows the same counts as /metrics (no device connects in between).
    page_html = http(status_port, "/")[2]
    for cell, name in (("connections-total", "fedstat_connections_total"),
                       ("checkins-total", "fedstat_checkins_total"),
                       ("handshake-failures", "fedstat_handshake_failures_total"),
                       ("resumed-handshakes", "fedstat_tls_resumed_handshakes_total")):
        shown = re.search(r'id="%s">(\d+)<' % cell, page_html)
        assert shown and int(shown.group(1)) == metric(samples, name), (cell, shown, text)
    assert metric(samples, "fedstat_rounds", state="completed") == 3, text
    assert metric(samples, "fedstat_rounds", state="running") == 0, text
    assert metric(samples, "fedstat_results_published") == 3
    contributors = sum(r["contributors"] for r in results.values())
    assert metric(samples, "fedstat_reports_stored_total") >= contributors, text
    for k, r in results.items():
        assert metric(samples, "fedstat_task_contributors", task=k) == r["contributors"]
        assert metric(samples, "fedstat_task_devices_accepted", task=k) == 10
        assert abs(metric(samples, "fedstat_task_estimate", task=k, kind="kl", trust="trusted") -
                   r["estimate"]) <= 1e-9 * max(1, abs(r["estimate"]))
    assert metric(samples, "fedstat_task_dropouts", task=1) == dropped
    say("/metrics: %d samples parse; checkins_total %d, reports_stored_total %d" % (
        len(samples), metric(samples, "fedstat_checkins_total"),
        metric(samples, "fedstat_reports_stored_total")))


if __name__ == "__main__":
    main()
