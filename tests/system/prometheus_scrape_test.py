#!/usr/bin/env python3
"""A real Prometheus server (Debian's `prometheus`) scrapes two real agents and the challenger's
`serve` during real loopback wave runs; the values are read back through its HTTP API.

The wave has two nodes: a (32 MiB of host memory, two fill threads) and b (64 MiB, one). Once b is
filling, the test stops b (SIGSTOP): a has filled and holds its labels while the wave waits for b,
so Prometheus sees a's bytes held equal to its planned bytes, and b as down (up == 0), for as long
as the test needs; then b goes on (SIGCONT) and the wave passes. Between the wave's two runs the
challenger's metrics are compared with the agents' (sessions, rounds), and both binaries' scrapes
pass `promtool check metrics`. At the end each agent counts two passing sessions.

Usage: prometheus_scrape_test.py PROVER_BIN CHALLENGER_BIN
Exit 0 pass, 1 fail; 77 (skipped) when the prometheus or promtool binary is missing
(scripts/setup-deps.sh installs Debian's `prometheus` package, which has both).
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

PROVER, CHALLENGER = sys.argv[1], sys.argv[2]
MIB = 1 << 20


T0 = time.monotonic()


def note(what):
    print("%6.1f s  %s" % (time.monotonic() - T0, what), flush=True)


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def wait_for(what, check, timeout_s=30.0, interval_s=0.05):
    """Calls check() until it returns a true value (returned) or timeout_s passes (a failure)."""
    end = time.monotonic() + timeout_s
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > end:
            fail("timed out waiting for " + what)
        time.sleep(interval_s)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.read().decode()
    except OSError:
        return None


def parse_metrics(text):
    """{'name{labels}': value} from exposition text (labels as rendered)."""
    out = {}
    for line in (text or "").splitlines():
        if line and not line.startswith("#"):
            key, value = line.rsplit(" ", 1)
            out[key] = float(value)
    return out


def read_line(path, prefix):
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(prefix):
                    return line[len(prefix):].strip()
    except FileNotFoundError:
        pass
    return None


def main():
    prometheus, promtool = shutil.which("prometheus"), shutil.which("promtool")
    if not prometheus or not promtool:
        print("SKIP: prometheus/promtool not installed (scripts/setup-deps.sh installs Debian's prometheus)")
        sys.exit(77)
    work = tempfile.mkdtemp(prefix="wp-prom.")
    procs = {}

    def cleanup():
        for p in procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGCONT)
                p.terminate()
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()
        shutil.rmtree(work, ignore_errors=True)

    try:
        run(work, procs, prometheus, promtool)
    finally:
        cleanup()


def start(procs, name, args, work):
    out = open(os.path.join(work, name + ".out"), "w")
    err = open(os.path.join(work, name + ".log"), "w")
    procs[name] = subprocess.Popen(args, stdout=out, stderr=err)


def logs(work, *names):
    for n in names:
        for ext in (".out", ".log"):
            path = os.path.join(work, n + ext)
            if os.path.exists(path):
                print("---- " + n + ext)
                print(open(path).read()[-3000:])


def run(work, procs, prometheus, promtool):
    w = lambda name: os.path.join(work, name)
    subprocess.run([CHALLENGER, "keygen", "--out=" + w("inspect")], check=True, stdout=subprocess.DEVNULL)
    agents = {"node-a": 32 * MIB, "node-b": 64 * MIB}
    threads = {"node-a": 2, "node-b": 1}
    addresses, metrics = {}, {}
    for node, budget in agents.items():
        subprocess.run([PROVER, "keygen", "--out=" + w(node)], check=True, stdout=subprocess.DEVNULL)
        start(procs, node, [PROVER, "serve", "--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0",
                            "--node_name=" + node, "--authority_key=" + w("inspect-authority.pub"),
                            "--challenger_key=" + w("inspect-challenger.pub"),
                            "--challenger_cert=" + w("inspect-challenger.crt"), "--node_key=" + w(node + ".key"),
                            "--host_budget_bytes=%d" % budget, "--devices=host", "--threads=%d" % threads[node]], work)
    for node in agents:
        addresses[node] = wait_for(node + " listening", lambda: read_line(w(node + ".out"), "listening on "))
        metrics[node] = wait_for(node + " metrics", lambda: read_line(w(node + ".out"), "metrics on "))

    # Idle agents: the device series exist at 0, the phase is idle.
    idle = parse_metrics(http_get("http://%s/metrics" % metrics["node-a"]))
    if idle.get('wipeproof_agent_phase{phase="idle"}') != 1:
        fail("an idle agent does not show phase idle: %r" % idle)
    held_key = 'wipeproof_agent_device_bytes_held{device="host",uuid="",model="host memory",node="node-a"}'
    if idle.get(held_key) != 0:
        fail("an idle agent's bytes held are not 0: %r" % idle)
    if http_get("http://%s/healthz" % metrics["node-a"]) != "ok\n":
        fail("/healthz is not ok")
    # A second agent on node-a's metrics port says so in words and does not start.
    taken = subprocess.run([PROVER, "serve", "--listen=127.0.0.1:0", "--metrics_listen=" + metrics["node-a"],
                            "--node_name=x", "--authority_key=" + w("inspect-authority.pub"),
                            "--challenger_key=" + w("inspect-challenger.pub"),
                            "--challenger_cert=" + w("inspect-challenger.crt"), "--node_key=" + w("node-a.key"),
                            "--devices=host"], capture_output=True, text=True, timeout=30)
    if taken.returncode != 3 or "already in use" not in taken.stderr:  # 3: the environment
        fail("a taken metrics port: exit %d, %s" % (taken.returncode, taken.stderr))

    inventory = {
        "nodes": [{"name": n, "address": addresses[n], "public_key_file": n + ".pub", "certificate_file": n + ".crt",
                   "devices": [{"selector": "host", "model": "host-dram", "capacity_bytes": b}]}
                  for n, b in agents.items()],
        "waves": [{"name": "pair", "nodes": list(agents), "period_s": 2, "jitter_s": 0, "complete": True}],
        "reserves": {"host-dram": 0}}
    json.dump(inventory, open(w("inventory.json"), "w"))
    json.dump({"name": "prom", "chunk_labels": 1024, "rounds": 8, "labels_per_round": 32,
               "round_deadline_us": 2000000, "fill_deadline_ms": 300000,
               "adversary": {"class": "commodity-cpu", "t_min_ps": 40000, "safety_factor": 2},
               "confidence": 0.99, "calibrated": False}, open(w("profile.json"), "w"))

    # Prometheus: both agents and the challenger, every 100 ms.
    challenger_metrics = "127.0.0.1:%d" % free_port()
    prom_port = free_port()
    with open(w("prometheus.yml"), "w") as f:
        f.write("global:\n  scrape_interval: 100ms\n  scrape_timeout: 100ms\nscrape_configs:\n")
        for job, target in (("node-a", metrics["node-a"]), ("node-b", metrics["node-b"]),
                            ("challenger", challenger_metrics)):
            f.write("  - job_name: %s\n    static_configs:\n      - targets: ['%s']\n" % (job, target))
    start(procs, "prometheus", [prometheus, "--config.file=" + w("prometheus.yml"), "--storage.tsdb.path=" + w("tsdb"),
                                "--web.listen-address=127.0.0.1:%d" % prom_port, "--log.level=warn"], work)
    api = "http://127.0.0.1:%d/api/v1/query?query=" % prom_port

    def query(expr):
        body = http_get(api + urllib.parse.quote(expr))
        if body is None:
            return None
        result = json.loads(body)["data"]["result"]
        return {tuple(sorted(r["metric"].items())): float(r["value"][1]) for r in result}

    def scalar(expr):
        values = query(expr)
        return next(iter(values.values())) if values else None

    wait_for("prometheus ready", lambda: http_get("http://127.0.0.1:%d/-/ready" % prom_port), timeout_s=30)
    note("prometheus ready")
    # Its first scrapes come some seconds later (target discovery is batched): the wave starts now,
    # the checks below wait for what Prometheus has seen.

    started = time.time()
    start(procs, "challenger", [CHALLENGER, "serve", "--inventory=" + w("inventory.json"),
                                "--profile=" + w("profile.json"), "--authority_key=" + w("inspect-authority.key"),
                                "--challenger_key=" + w("inspect-challenger.key"), "--ledger=" + w("ledger.db"),
                                "--metrics_listen=" + challenger_metrics, "--max_sessions=4", "--threads=1"], work)

    # Stop b while it fills; a then holds its labels while the wave waits for b.
    def b_filling():
        m = parse_metrics(http_get("http://%s/metrics" % metrics["node-b"]))
        return m.get('wipeproof_agent_phase{phase="filling"}') == 1 and m.get("wipeproof_agent_fill_progress_ratio", 1) < 1
    wait_for("node-b filling", b_filling, timeout_s=30, interval_s=0.01)
    note("node-b filling: stopped")
    procs["node-b"].send_signal(signal.SIGSTOP)
    try:
        held = ('wipeproof_agent_device_bytes_held{node="node-a"} == wipeproof_agent_device_planned_bytes{node="node-a"}'
                ' and wipeproof_agent_device_planned_bytes{node="node-a"} > 0')
        value = wait_for("prometheus to see node-a holding its planned bytes", lambda: scalar(held), timeout_s=20)
        planned = scalar('wipeproof_agent_device_planned_bytes{node="node-a"}')
        if not (value == planned and 0 < planned <= 32 * MIB):
            fail("node-a holds %r of %r planned bytes (budget 32 MiB)" % (value, planned))
        if scalar('wipeproof_agent_phase{job="node-a",phase="ready"}') != 1:
            fail("node-a is not ready while it holds its labels")
        if scalar('count(wipeproof_agent_session_info{job="node-a"})') != 1:
            fail("node-a shows no session id")
        wait_for("prometheus to see node-b down", lambda: scalar('up{job="node-b"}') == 0, timeout_s=20)
        # promtool on a real scrape of both binaries, mid-wave.
        for name, target in (("agent", metrics["node-a"]), ("challenger", challenger_metrics)):
            text = wait_for(name + " scrape", lambda: http_get("http://%s/metrics" % target))
            check = subprocess.run([promtool, "check", "metrics"], input=text, text=True, capture_output=True)
            if check.returncode != 0 or check.stdout.strip() or check.stderr.strip():
                fail("promtool check metrics on the %s: %s%s\n%s" % (name, check.stdout, check.stderr, text))
            if name == "challenger" and not parse_metrics(text).get("wipeproof_challenger_precompute_backlog_bytes", 0) > 0:
                fail("challenger: no expected labels held while its wave runs:\n" + text)
    finally:
        procs["node-b"].send_signal(signal.SIGCONT)

    note("node-b continued")
    # Between the two runs: the challenger's counts agree with the agents'.
    def first_run_done():
        m = parse_metrics(http_get("http://%s/metrics" % challenger_metrics))
        return m if m.get('wipeproof_challenger_wave_runs_total{wave="pair",outcome="pass"}') == 1 else None
    c = wait_for("the first wave run to pass", first_run_done, timeout_s=60, interval_s=0.02)
    note("first wave run passed")
    a = parse_metrics(http_get("http://%s/metrics" % metrics["node-a"]))
    for node in agents:
        if c.get('wipeproof_challenger_sessions_total{node="%s",outcome="pass"}' % node) != 1:
            fail("challenger: %s has not one passing session: %r" % (node, c))
        if not c.get('wipeproof_challenger_last_pass_timestamp_seconds{node="%s"}' % node, 0) >= started - 1:
            fail("challenger: no recent last pass for " + node)
        if c.get('wipeproof_challenger_fill_seconds{node="%s"}' % node, 0) <= 0:
            fail("challenger: no fill seconds for " + node)
    rounds = a.get("wipeproof_agent_rounds_answered_total", 0)
    if rounds <= 0 or c.get('wipeproof_challenger_round_seconds_count{node="node-a"}') != rounds:
        fail("rounds: agent answered %r, challenger timed %r" %
             (rounds, c.get('wipeproof_challenger_round_seconds_count{node="node-a"}')))
    if a.get("wipeproof_agent_round_lookup_seconds_count") != rounds:
        fail("agent: %r lookups timed for %r rounds" % (a.get("wipeproof_agent_round_lookup_seconds_count"), rounds))
    if c.get("wipeproof_challenger_ledger_verified") != 1 or c.get("wipeproof_challenger_ledger_entries", 0) <= 0:
        fail("challenger: ledger not verified or empty: %r" % c)
    # The schedule is secret (threat-model.md T-SCHEDULE-SECRET): no series says when the next run is.
    announced = [k for k in c if "next_wave" in k or "next_run" in k]
    if announced:
        fail("challenger: series announce the next run: %r" % announced)

    note("compared")
    # The second run; then every agent counts two passes (as Prometheus reads them).
    if procs["challenger"].wait(timeout=120) != 0:
        logs(work, "challenger", "node-a", "node-b")
        fail("challenger serve exited %d" % procs["challenger"].returncode)
    for node in agents:
        wait_for(node + ": two passing sessions in prometheus",
                 lambda: scalar('wipeproof_agent_sessions_total{job="%s",outcome="pass"}' % node) == 2, timeout_s=20)
        if scalar('wipeproof_agent_phase{job="%s",phase="idle"}' % node) != 1:
            fail(node + " is not idle after the waves")
        if scalar('wipeproof_agent_device_bytes_held{job="%s"}' % node) != 0:
            fail(node + " still holds labels after the waves")
    note("second run done")
    if scalar('max_over_time(wipeproof_challenger_sessions_total{node="node-b",outcome="pass"}[5m])') not in (1, 2):
        fail("prometheus did not record the challenger's passing sessions")
    refusals = scalar('sum(wipeproof_agent_refusals_total)')
    if refusals != 0:
        fail("agents refused %r orders" % refusals)
    print("ok: prometheus read back both agents and the challenger over two wave runs (%d rounds per session)"
          % (rounds))


if __name__ == "__main__":
    main()
