#!/usr/bin/env python3
"""examples/server/ as its README runs it: fedstat-server on examples/server/server.json as
committed, from the repository root, and for each of its tasks a fleet of 20 emulated devices
(fedstat-sim --task examples/server/server.json --task-id N, its README's command).

Only the ports and the store are moved (--listen, --status-listen 127.0.0.1:0, --store and the
devices' --state in WORKDIR), so the test neither collides with a server someone is running nor
writes into the source tree: it fails if any file under examples/server/ changed while it ran.
Checks: the server warns that its fleet_secret is the published example; every task's round
completes with its 20 devices (the heterogeneity task's two stages too) and publishes a result;
where a result names its aggregate (dist tasks: sum_sha256) it equals fedstat-sim's in-process
recomputation bit for bit; the status page's /metrics gives each task the epsilon server.json
declares for it and no failed device.

usage: example_server_test.py SERVER SIM WORKDIR SOURCE_DIR
Exit 0 when every check held. Synchronisation is by polling with deadlines, never by sleeping.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

STARTED = time.monotonic()


def say(*args):
    print("[%5.1fs]" % (time.monotonic() - STARTED), *args, flush=True)


def fail(message):
    sys.exit("example_server_test: " + message)


def snapshot(directory):
    """Every file under `directory` with its size and modification time."""
    out = {}
    for root, _, files in os.walk(directory):
        for name in files:
            path = os.path.join(root, name)
            s = os.lstat(path)
            out[os.path.relpath(path, directory)] = (s.st_size, s.st_mtime_ns)
    return out


def main():
    if len(sys.argv) != 5:
        fail("usage: example_server_test.py SERVER SIM WORKDIR SOURCE_DIR")
    server_bin, sim_bin, work, source = (os.path.abspath(a) for a in sys.argv[1:])
    config = "examples/server/server.json"  # relative, from the repository root: as the README
    example_dir = os.path.join(source, "examples", "server")
    with open(os.path.join(source, config)) as f:
        declared = json.load(f)
    secret = declared["fleet_secret"]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "devices"))
    before = snapshot(example_dir)

    port_file, log_path = os.path.join(work, "port"), os.path.join(work, "server.log")
    log = open(log_path, "w")
    server = subprocess.Popen(
        [server_bin, "--config", config, "--listen", "127.0.0.1:0", "--status-listen",
         "127.0.0.1:0", "--store", os.path.join(work, "server.db"), "--port-file", port_file],
        cwd=source, stderr=log)
    try:
        deadline = time.monotonic() + 60
        while not (os.path.exists(port_file) and os.path.getsize(port_file) > 0):
            if server.poll() is not None or time.monotonic() > deadline:
                fail("the server did not listen:\n" + open(log_path).read())
            time.sleep(0.05)  # polling the port file, bounded above
        port = int(open(port_file).read())
        text = open(log_path).read()
        status_port = int(re.search(r'"event":"status_listening".*?"port":(\d+)', text).group(1))
        if "fleet_secret is an example secret" not in text:
            fail("no warning about the published example fleet_secret:\n" + text)
        say("server on port", port, "status page on", status_port)

        for k, task in enumerate(declared["tasks"]):
            run = subprocess.run(
                [sim_bin, "--server", "127.0.0.1:%d" % port, "--task", config, "--task-id",
                 str(task["id"]), "--data", "examples/server/fleet", "--fleet-secret", secret,
                 "--clients", "20", "--first-id", str(1000 * (k + 1) + 1), "--seed", "7",
                 "--state", os.path.join(work, "devices"), "--json"],
                cwd=source, capture_output=True, text=True, timeout=300)
            if run.returncode != 0:
                fail("fedstat-sim, task %d: rc %d\n%s" % (task["id"], run.returncode, run.stderr))
            sim = json.loads(run.stdout)
            stages = sim.get("stages", [dict(sim, task=task["id"])])
            for stage in stages:
                if stage["outcomes"] != {"completed": 20}:
                    fail("task %d: outcomes %r" % (stage["task"], stage["outcomes"]))
                got = subprocess.run([server_bin, "results", str(stage["task"]), "--config",
                                      config, "--store", os.path.join(work, "server.db"),
                                      "--json"], cwd=source, capture_output=True, text=True,
                                     timeout=60)
                if got.returncode != 0:
                    fail("task %d has no result: %s" % (stage["task"], got.stderr))
                result = json.loads(got.stdout)
                if result["contributors"] != 20:
                    fail("task %d: %r" % (stage["task"], result))
                if task["trust"] == "dist" and \
                        result.get("sum_sha256") != stage["expected"]["sum_sha256"]:
                    fail("task %d: published aggregate %s, in-process %s" % (
                        stage["task"], result.get("sum_sha256"), stage["expected"]))
                say("task %d (%s, %s): estimate %s" % (stage["task"], task["kind"],
                                                       task["trust"], result.get("estimate")))

        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % status_port, timeout=10) as r:
            metrics = r.read().decode()
        for task in declared["tasks"]:
            labels = '{task="%d",kind="%s",trust="%s"}' % (task["id"], task["kind"],
                                                          task["trust"])
            shown = re.search(r"^fedstat_task_epsilon%s (\S+)$" % re.escape(labels), metrics,
                              re.M)
            if not shown or float(shown.group(1)) != task["epsilon"]:
                fail("task %d: epsilon %s on /metrics, %s declared" % (
                    task["id"], shown and shown.group(1), task["epsilon"]))
            if not re.search(r"^fedstat_task_devices_failed%s 0$" % re.escape(labels), metrics,
                             re.M):
                fail("task %d: no fedstat_task_devices_failed 0 on /metrics" % task["id"])
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            rc = server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
            rc = None
        log.close()
    if rc != 0:
        fail("the server exited with %r on SIGTERM:\n%s" % (rc, open(log_path).read()))
    after = snapshot(example_dir)
    if after != before:
        changed = sorted(set(after.items()) ^ set(before.items()))
        fail("the test wrote into the source tree: %r" % changed)
    say("every task completed; examples/server/ unchanged")
    return 0


if __name__ == "__main__":
    sys.exit(main())
