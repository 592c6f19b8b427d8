#!/usr/bin/env python3
"""The shipped monitoring files against the code: every wipeproof_* metric that the Grafana
dashboard (deploy/grafana/wipeproof-dashboard.json) or the alert rules
(deploy/prometheus/wipeproof-alerts.yml) use is documented in docs/metrics.md and registered by a
binary (prover/agent/agent_metrics.cc, challenger/fleet/fleet_metrics.cc), every documented metric
is registered and every registered one documented; none announces the next run; the dashboard is
well-formed (unique panel ids, a query in every panel, the datasource variable it refers to); and
every selector of a wipeproof_* metric in the dashboard and the alert rules names the job that
serves it, and the example scrape keeps only the agent's own series from the agents (an agent's
endpoint is the inspected party's: series it serves under the challenger's names must not reach an
alert or a panel).

Usage: deploy_files_test.py SOURCE_ROOT        Exit status: 0 when all agree.
"""
import json
import os
import re
import sys

root = sys.argv[1]
read = lambda path: open(os.path.join(root, path)).read()
problems = []

NAME = re.compile(r"\bwipeproof_[a-z0-9_]+")


def base(name):
    """A histogram's series name to the family name."""
    return re.sub(r"_(bucket|sum|count)$", "", name)


registered = set(re.findall(r'"(wipeproof_[a-z0-9_]+)"', read("prover/agent/agent_metrics.cc") +
                            read("challenger/fleet/fleet_metrics.cc")))
documented = set(re.findall(r"^\| `(wipeproof_[a-z0-9_]+)` \|", read("docs/metrics.md"), re.M))
if len(registered) < 20:
    problems.append("found only %d registered metrics: is the source root right?" % len(registered))
# The schedule is secret: no metric announces a next run.
# threat-model: T-SCHEDULE-SECRET
for name in sorted(registered | documented):
    if re.search(r"next_(wave|run)", name):
        problems.append("%s announces the next run: the wipe schedule is secret" % name)
for name in sorted(registered - documented):
    problems.append("%s is registered but not in docs/metrics.md's tables" % name)
for name in sorted(documented - registered):
    problems.append("%s is in docs/metrics.md but no binary registers it" % name)

dashboard = json.loads(read("deploy/grafana/wipeproof-dashboard.json"))
ids = [p["id"] for p in dashboard["panels"]]
if len(ids) != len(set(ids)):
    problems.append("dashboard panel ids repeat: %r" % ids)
if not any(v.get("name") == "datasource" for v in dashboard["templating"]["list"]):
    problems.append("dashboard has no datasource variable")
used = {}
for panel in dashboard["panels"]:
    if panel["type"] == "row":
        continue
    exprs = [t.get("expr", "") for t in panel.get("targets", [])]
    if not exprs or not all(exprs):
        problems.append("panel '%s' has no query" % panel["title"])
    if panel.get("datasource", {}).get("uid") != "${datasource}":
        problems.append("panel '%s' does not use the datasource variable" % panel["title"])
    for e in exprs:
        for n in NAME.findall(e):
            used.setdefault(base(n), "dashboard panel '%s'" % panel["title"])
for n in NAME.findall(read("deploy/prometheus/wipeproof-alerts.yml")):
    used.setdefault(base(n), "deploy/prometheus/wipeproof-alerts.yml")

# threat-model: T-METRICS-FORGED
JOB_OF = {"wipeproof_challenger_": "wipeproof-challenger", "wipeproof_agent_": "wipeproof-agent"}
SELECTOR = re.compile(r"\b(wipeproof_(?:challenger|agent)_[a-z0-9_]+)(\{[^}]*\})?")
queries = [("dashboard panel '%s'" % p["title"], t.get("expr", "")) for p in dashboard["panels"]
           for t in p.get("targets", [])]
queries += [("deploy/prometheus/wipeproof-alerts.yml", line)
            for line in read("deploy/prometheus/wipeproof-alerts.yml").splitlines()]
for where, expr in queries:
    for m in SELECTOR.finditer(expr):
        job = next(j for prefix, j in JOB_OF.items() if m.group(1).startswith(prefix))
        if 'job="%s"' % job not in (m.group(2) or ""):
            problems.append("%s: %s selects no job=\"%s\": another job's series (an agent's) would count"
                            % (where, m.group(1), job))
scrape = read("deploy/prometheus/scrape-example.yml")
agent_job = scrape.split("job_name: wipeproof-agent", 1)[-1].split("- job_name:", 1)[0]
if not re.search(r"regex: '?wipeproof_agent_\.\*'?\s*\n\s*action: keep", agent_job):
    problems.append("scrape-example.yml: the wipeproof-agent job does not keep only wipeproof_agent_.* series")
for name, where in sorted(used.items()):
    if name not in documented or name not in registered:
        problems.append("%s (%s) is not a documented, registered metric" % (name, where))

for p in problems:
    print("FAIL: " + p)
if problems:
    sys.exit(1)
print("ok: %d metrics registered and documented; the dashboard (%d panels) and alert rules use %d of them"
      % (len(registered), len(ids), len(used)))
