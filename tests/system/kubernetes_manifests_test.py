#!/usr/bin/env python3
"""Offline check of deploy/kubernetes (kubectl is not in Debian 12, so no `kubectl apply
--dry-run=client`). The manifests come in two folders, one per cluster: inspected-cluster/ (the
agent DaemonSet and the ServiceAccount the challenger drains with) and authority-cluster/ (the
challenger, where the inspected party has no admin).

Every document parses (PyYAML), has apiVersion/kind/metadata.name and the wipeproof namespace; pod
templates use only known field names (a typo is an error, as the API server's strict field
validation would make it), selectors match their template labels, every volumeMount names a volume,
every port name is a valid IANA_SVC_NAME; and what each object must hold:
- inspected cluster: no challenger, and no authority or challenger secret key anywhere (no `.key`
  of theirs named in any field, no Secret carrying one); the agent DaemonSet has a GPU node
  selector, only the IPC_LOCK capability and the GPU devices, and pins only public halves (.pub,
  .crt); the RBAC lets the challenger cordon, evict and annotate;
- authority cluster: no authority secret key at all (it stays offline); the challenger StatefulSet
  runs under the authority's delegation (--delegation, --authority_pub, no --authority_key), is pinned to the authority's nodes (nodeSelector or required node affinity on
  wipeproof.io/authority-node), keeps its ledger on a volume claim and reads its key from a Secret
  copied by an init container into a memory folder with mode 0600 (fsGroup would make the Secret
  0440), its Service exists; a NetworkPolicy selects its pods, admits in only the metrics port from a
  named namespace and lets out only the agents' port, DNS and the API server port;
- each ServiceMonitor selects Services whose ports it names.

Usage: kubernetes_manifests_test.py DEPLOY_KUBERNETES_DIR [--self-check]
--self-check: breaks copies of the manifests in known ways and expects each to be caught.
"""
# threat-model: T-INSPECTED-ADMIN
import copy
import glob
import os
import re
import sys

import yaml

NAMESPACED = {"DaemonSet", "StatefulSet", "Service", "ServiceAccount", "ServiceMonitor", "ConfigMap", "Secret",
              "NetworkPolicy"}
API_VERSIONS = {
    "Namespace": "v1", "Service": "v1", "ServiceAccount": "v1", "ConfigMap": "v1", "Secret": "v1",
    "DaemonSet": "apps/v1", "StatefulSet": "apps/v1",
    "ClusterRole": "rbac.authorization.k8s.io/v1", "ClusterRoleBinding": "rbac.authorization.k8s.io/v1",
    "ServiceMonitor": "monitoring.coreos.com/v1", "NetworkPolicy": "networking.k8s.io/v1",
}
CLUSTERS = ("inspected-cluster", "authority-cluster")
AUTHORITY_NODE_LABEL = "wipeproof.io/authority-node"
# A secret key of the authority or the challenger, however named: inspect-authority.key,
# /etc/wipeproof/keys/inspect-challenger.key, authority.key, or a key file's secret seed.
AUTHORITY_SECRET = re.compile(r"authority[\w.-]*\.key\b|secret-seed")
CHALLENGER_SECRET = re.compile(r"challenger[\w.-]*\.key\b")
AGENT_PORT = 7300
DNS_PORT = 53
API_SERVER_PORTS = {443, 6443}
POD_SPEC_KEYS = {
    "nodeSelector", "tolerations", "priorityClassName", "runtimeClassName", "automountServiceAccountToken",
    "terminationGracePeriodSeconds", "initContainers", "containers", "volumes", "serviceAccountName",
    "securityContext", "hostNetwork", "hostIPC", "hostPID", "affinity", "dnsPolicy", "restartPolicy",
}
CONTAINER_KEYS = {
    "name", "image", "command", "args", "env", "ports", "securityContext", "resources", "volumeMounts",
    "readinessProbe", "livenessProbe", "startupProbe", "imagePullPolicy", "workingDir",
}
SECURITY_CONTEXT_KEYS = {"allowPrivilegeEscalation", "readOnlyRootFilesystem", "capabilities", "privileged",
                         "runAsNonRoot", "runAsUser", "runAsGroup", "seccompProfile"}
VOLUME_SOURCES = {"hostPath", "secret", "configMap", "persistentVolumeClaim", "emptyDir"}
PORT_NAME = re.compile(r"^(?=.{1,15}$)[a-z0-9]([a-z0-9-]*[a-z0-9])?$")
GPU_DEVICES = {"/dev/kfd", "/dev/dri"}


def load(folder):
    """Every document of both clusters' folders, as ("CLUSTER/FILE#I", doc)."""
    docs = []
    for cluster in CLUSTERS:
        for path in sorted(glob.glob(os.path.join(folder, cluster, "*.yaml"))):
            with open(path) as f:
                for i, doc in enumerate(yaml.safe_load_all(f)):
                    if doc is not None:
                        docs.append((f"{cluster}/{os.path.basename(path)}#{i}", doc))
    return docs


def cluster_of(where):
    return where.split("/", 1)[0]


def strings(value):
    """Every string in a document, keys and values, at any depth."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def check_no_secret_keys(docs, cluster, pattern, whose, why, errors):
    """No document of `cluster` names a secret key matching `pattern` in any field (an argument, a
    path, a Secret's data key, an annotation)."""
    for where, doc in docs:
        if cluster_of(where) != cluster:
            continue
        for text in strings(doc):
            if pattern.search(text):
                errors.append(f"{where}: names {whose} secret key ({text!r}): {why}")
                break


def pinned(pod):
    """Whether a pod spec is pinned to the authority's nodes."""
    if pod.get("nodeSelector", {}).get(AUTHORITY_NODE_LABEL) == "true":
        return True
    required = (pod.get("affinity", {}).get("nodeAffinity", {})
                .get("requiredDuringSchedulingIgnoredDuringExecution", {}).get("nodeSelectorTerms", []))
    return bool(required) and all(any(e.get("key") == AUTHORITY_NODE_LABEL and e.get("operator") == "In"
                                      and e.get("values") == ["true"] for e in t.get("matchExpressions", []))
                                  for t in required)


def check_network_policy(policies, pod_labels, errors):
    """A NetworkPolicy selects the challenger's pods: ingress only to named ports from a named
    namespace, egress only to the agents' port, DNS and the API server."""
    mine = [(w, p) for w, p in policies
            if all(pod_labels.get(k) == v for k, v in p["spec"].get("podSelector", {}).get("matchLabels", {}).items())
            and p["spec"].get("podSelector", {}).get("matchLabels")]
    if not mine:
        errors.append("challenger: no NetworkPolicy selects its pods")
        return
    for where, policy in mine:
        spec = policy["spec"]
        if set(spec.get("policyTypes", [])) != {"Ingress", "Egress"}:
            errors.append(f"{where}: policyTypes must be Ingress and Egress, got {spec.get('policyTypes')}")
        for rule in spec.get("ingress", []):
            peers = rule.get("from", [])
            if not peers or not rule.get("ports"):
                errors.append(f"{where}: an ingress rule admits any peer or any port")
            for peer in peers:
                if not peer.get("namespaceSelector", {}).get("matchLabels") or "ipBlock" in peer:
                    errors.append(f"{where}: ingress from {peer}: admit only a named (scraper) namespace")
        egress_ports = set()
        for rule in spec.get("egress", []):
            if not rule.get("ports") or not rule.get("to"):
                errors.append(f"{where}: an egress rule lets out any port or to anyone")
            for port in rule.get("ports", []):
                egress_ports.add(port.get("port"))
        allowed = {AGENT_PORT, DNS_PORT} | API_SERVER_PORTS
        if egress_ports - allowed:
            errors.append(f"{where}: egress to ports {sorted(egress_ports - allowed, key=str)}: only the agents' "
                          f"port {AGENT_PORT}, DNS and the API server")
        if not {AGENT_PORT, DNS_PORT} <= egress_ports:
            errors.append(f"{where}: egress must reach the agents' port {AGENT_PORT} and DNS")


def check_pod(where, pod, errors):
    spec = pod.get("spec", {})
    for key in spec:
        if key not in POD_SPEC_KEYS:
            errors.append(f"{where}: spec.{key}: unknown pod spec field")
    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    for v in volumes.values():
        if not VOLUME_SOURCES & set(v):
            errors.append(f"{where}: volume {v['name']}: no known source")
    containers = spec.get("containers", []) + spec.get("initContainers", [])
    if not spec.get("containers"):
        errors.append(f"{where}: no containers")
    for c in containers:
        for key in c:
            if key not in CONTAINER_KEYS:
                errors.append(f"{where}: container {c.get('name')}: {key}: unknown container field")
        for key in ("name", "image"):
            if not c.get(key):
                errors.append(f"{where}: container without {key}")
        for key in c.get("securityContext", {}):
            if key not in SECURITY_CONTEXT_KEYS:
                errors.append(f"{where}: container {c['name']}: securityContext.{key}: unknown field")
        for p in c.get("ports", []):
            if not PORT_NAME.match(p.get("name", "")):
                errors.append(f"{where}: container {c['name']}: port name {p.get('name')!r} is not an IANA_SVC_NAME")
            if not isinstance(p.get("containerPort"), int):
                errors.append(f"{where}: container {c['name']}: port without an integer containerPort")
        for m in c.get("volumeMounts", []):
            if m["name"] not in volumes and m["name"] not in pod.get("_claims", set()):
                errors.append(f"{where}: container {c['name']}: volumeMount {m['name']} names no volume")
    return spec, volumes, containers


def check(docs):
    errors = []
    by_kind = {}
    for where, doc in docs:
        for key in ("apiVersion", "kind", "metadata"):
            if key not in doc:
                errors.append(f"{where}: {key}: missing")
        kind = doc.get("kind")
        if kind not in API_VERSIONS:
            errors.append(f"{where}: kind {kind!r} not expected here")
        elif doc.get("apiVersion") != API_VERSIONS[kind]:
            errors.append(f"{where}: {kind} wants apiVersion {API_VERSIONS[kind]}, got {doc.get('apiVersion')}")
        meta = doc.get("metadata", {})
        if not meta.get("name"):
            errors.append(f"{where}: metadata.name: missing")
        if kind in NAMESPACED and meta.get("namespace") != "wipeproof":
            errors.append(f"{where}: {kind} {meta.get('name')}: not in namespace wipeproof")
        by_kind.setdefault(kind, []).append((where, doc))

    for kind in ("DaemonSet", "StatefulSet"):
        for where, doc in by_kind.get(kind, []):
            spec = doc["spec"]
            template = spec.get("template", {})
            labels = template.get("metadata", {}).get("labels", {})
            for k, v in spec.get("selector", {}).get("matchLabels", {}).items():
                if labels.get(k) != v:
                    errors.append(f"{where}: selector {k}={v} does not match the template's labels")
            if kind == "StatefulSet":
                template = copy.deepcopy(template)
                template["_claims"] = {t["metadata"]["name"] for t in spec.get("volumeClaimTemplates", [])}
            check_pod(where, template, errors)

    # What the inspected party administers holds no secret key of the authority or the challenger,
    # and no challenger; the authority's cluster holds no authority secret key either (offline).
    inspected = "the inspected party administers this cluster"
    check_no_secret_keys(docs, "inspected-cluster", AUTHORITY_SECRET, "the authority's", inspected, errors)
    check_no_secret_keys(docs, "inspected-cluster", CHALLENGER_SECRET, "the challenger's", inspected, errors)
    check_no_secret_keys(docs, "authority-cluster", AUTHORITY_SECRET, "the authority's",
                         "the authority key stays offline, never in the challenger's manifests", errors)
    for where, doc in by_kind.get("StatefulSet", []) + by_kind.get("Deployment", []):
        if cluster_of(where) == "inspected-cluster":
            errors.append(f"{where}: a challenger in the inspected cluster")

    agents = [(w, d) for w, d in by_kind.get("DaemonSet", []) if d["metadata"]["name"] == "wipeproof-agent"]
    if len(agents) != 1:
        errors.append("no DaemonSet wipeproof-agent")
    elif cluster_of(agents[0][0]) != "inspected-cluster":
        errors.append(f"{agents[0][0]}: the agent DaemonSet belongs in the inspected cluster")
    else:
        agents = [agents[0][1]]
        pod = agents[0]["spec"]["template"]["spec"]
        if not pod.get("nodeSelector"):
            errors.append("agent DaemonSet: no nodeSelector for GPU nodes")
        agent = next(c for c in pod["containers"] if c["name"] == "agent")
        caps = agent.get("securityContext", {}).get("capabilities", {})
        if caps.get("add") != ["IPC_LOCK"] or caps.get("drop") != ["ALL"]:
            errors.append(f"agent: capabilities must drop ALL and add only IPC_LOCK, got {caps}")
        if agent.get("securityContext", {}).get("privileged"):
            errors.append("agent: privileged")
        host_paths = {v["hostPath"]["path"] for v in pod.get("volumes", []) if "hostPath" in v}
        if not GPU_DEVICES <= host_paths:
            errors.append(f"agent: GPU devices {sorted(GPU_DEVICES - host_paths)} not mounted")
        env = {e["name"]: e.get("value") for e in agent.get("env", [])}
        if env.get("NVIDIA_VISIBLE_DEVICES") != "all":
            errors.append("agent: NVIDIA_VISIBLE_DEVICES=all missing (NVIDIA GPUs through the container runtime)")
        if not any(a.startswith("--node_name=") for a in agent.get("args", [])):
            errors.append("agent: no --node_name")
        for a in agent.get("args", []):
            flag, _, value = a.partition("=")
            want = {"--authority_key": ".pub", "--challenger_key": ".pub", "--challenger_cert": ".crt"}.get(flag)
            if want and not value.endswith(want):
                errors.append(f"agent: {flag} must pin a public file ({want}), got {value}")

    challengers = [(w, d) for w, d in by_kind.get("StatefulSet", []) if d["metadata"]["name"] == "wipeproof-challenger"]
    if len(challengers) != 1:
        errors.append("no StatefulSet wipeproof-challenger")
    elif cluster_of(challengers[0][0]) != "authority-cluster":
        errors.append(f"{challengers[0][0]}: the challenger belongs in the authority's cluster")
    else:
        sts = challengers[0][1]["spec"]
        pod = sts["template"]["spec"]
        if not pinned(pod):
            errors.append(f"challenger: not pinned to the authority's nodes (nodeSelector {AUTHORITY_NODE_LABEL}: "
                          "\"true\" or a required node affinity on it)")
        check_network_policy([(w, d) for w, d in by_kind.get("NetworkPolicy", [])
                              if cluster_of(w) == "authority-cluster"],
                             sts["template"].get("metadata", {}).get("labels", {}), errors)
        claims = {t["metadata"]["name"] for t in sts.get("volumeClaimTemplates", [])}
        container = sts["template"]["spec"]["containers"][0]
        mounts = {m["name"]: m["mountPath"] for m in container.get("volumeMounts", [])}
        ledger_args = [a for a in container.get("args", []) if a.startswith("--ledger=")]
        if not ledger_args or not any(ledger_args[0][len("--ledger="):].startswith(mounts.get(c, "-") + "/")
                                      for c in claims):
            errors.append("challenger: the ledger is not on a volume claim")
        volumes = sts["template"]["spec"].get("volumes", [])
        secrets = {v["name"]: v["secret"] for v in volumes if "secret" in v}
        memory = {v["name"] for v in volumes if v.get("emptyDir", {}).get("medium") == "Memory"}
        inits = sts["template"]["spec"].get("initContainers", [])
        key_args = [a.split("=", 1)[1] for a in container.get("args", []) if a.startswith("--challenger_key=")]
        if not key_args:
            errors.append("challenger: no --challenger_key")
        # It orders under the authority's delegation: the delegation and the authority's public key, never
        # the authority's secret key (the lab form, --authority_key).
        flags = {a.split("=", 1)[0] for a in container.get("args", []) if a.startswith("--")}
        if "--authority_key" in flags:
            errors.append("challenger: --authority_key (the authority's secret key) on the challenger: use --delegation")
        if not {"--delegation", "--authority_pub"} <= flags:
            errors.append("challenger: not run under a delegation (--delegation and --authority_pub)")
        # fsGroup turns a Secret's 0400 into 0440, which the challenger refuses for a secret key: the keys
        # must reach it through a memory folder an init container fills from the Secret with mode 0600.
        for path in key_args:
            vol = next((n for n, p in mounts.items() if path.startswith(p + "/")), None)
            if vol in secrets:
                errors.append(f"challenger: key {path} is read from a Secret volume (fsGroup makes it 0440)")
            elif vol not in memory:
                errors.append(f"challenger: key {path} is not in a memory-backed emptyDir")
            elif not any(vol in {m["name"] for m in i.get("volumeMounts", [])}
                         and any(m["name"] in secrets for m in i.get("volumeMounts", []))
                         and "install -m 0600" in " ".join(i.get("command", []) + i.get("args", []))
                         for i in inits):
                errors.append(f"challenger: no init container copies the keys into {vol} with install -m 0600")
        shard = [a.split("=", 1)[1] for a in container.get("args", []) if a.startswith("--shard=")]
        if not shard or shard[0] != f"$(REPLICA)/{sts.get('replicas')}":
            errors.append(f"challenger: --shard must be $(REPLICA)/<replicas> ({sts.get('replicas')}), got {shard}")
        services = {d["metadata"]["name"] for _, d in by_kind.get("Service", [])}
        if sts.get("serviceName") not in services:
            errors.append(f"challenger: serviceName {sts.get('serviceName')} names no Service")

    monitors = by_kind.get("ServiceMonitor", [])
    if not monitors:
        errors.append("no ServiceMonitor")
    for where, mon in monitors:
        selector = mon["spec"]["selector"]["matchLabels"]
        selected = [d for w, d in by_kind.get("Service", []) if cluster_of(w) == cluster_of(where)
                    and all(d["metadata"].get("labels", {}).get(k) == v for k, v in selector.items())]
        if not selected:
            errors.append(f"{where}: selects no Service of its cluster")
        for ep in mon["spec"]["endpoints"]:
            for svc in selected:
                if ep["port"] not in {p.get("name") for p in svc["spec"]["ports"]}:
                    errors.append(f"{where}: Service {svc['metadata']['name']} has no port {ep['port']}")
        # The alert rules and the dashboard select job="wipeproof-agent" / "wipeproof-challenger":
        # the job is the Service label jobLabel names (else the Service's name, which may differ).
        # threat-model: T-METRICS-FORGED
        job_label = mon["spec"].get("jobLabel")
        for svc in selected:
            job = svc["metadata"].get("labels", {}).get(job_label) if job_label else svc["metadata"]["name"]
            if job not in ("wipeproof-agent", "wipeproof-challenger"):
                errors.append(f"{where}: Service {svc['metadata']['name']} is scraped as job {job!r}, which no alert "
                              "rule selects (set jobLabel: app.kubernetes.io/name)")
            if job == "wipeproof-agent":
                for ep in mon["spec"]["endpoints"]:
                    keep = [r for r in ep.get("metricRelabelings", [])
                            if r.get("action") == "keep" and r.get("sourceLabels") == ["__name__"]
                            and r.get("regex") == "wipeproof_agent_.*"]
                    if not keep:
                        errors.append(f"{where}: the agents' endpoint keeps more than wipeproof_agent_.* series "
                                      "(metricRelabelings keep rule)")

    rules = [r for w, d in by_kind.get("ClusterRole", []) if cluster_of(w) == "inspected-cluster"
             for r in d.get("rules", [])]
    def allowed(resource, verb):
        return any(resource in r["resources"] and verb in r["verbs"] for r in rules)
    for resource, verb in (("nodes", "patch"), ("pods/eviction", "create"), ("pods", "list"), ("daemonsets", "get")):
        if not allowed(resource, verb):
            errors.append(f"RBAC: the challenger may not {verb} {resource} (kubectl drain needs it)")
    return errors


def find(docs, kind, name):
    return next(d for _, d in docs if d["kind"] == kind and d["metadata"]["name"] == name)


def add_doc(docs, cluster, doc):
    docs.append((f"{cluster}/planted.yaml#0", doc))


def remove(docs, kind):
    docs[:] = [(w, d) for w, d in docs if d["kind"] != kind]


def secret_with(key):
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "keys", "namespace": "wipeproof"},
            "data": {key: "AAAA"}}


def agent_pod(docs):
    return find(docs, "DaemonSet", "wipeproof-agent")["spec"]["template"]["spec"]


def challenger_sts(docs):
    return find(docs, "StatefulSet", "wipeproof-challenger")["spec"]


BREAKS = {
    "typo in a container field": lambda d: agent_pod(d)["containers"][0].__setitem__("volumeMount", []),
    "privileges beyond IPC_LOCK":
        lambda d: agent_pod(d)["containers"][0]["securityContext"]["capabilities"]["add"].append("SYS_ADMIN"),
    "no node selector": lambda d: agent_pod(d).pop("nodeSelector"),
    "no GPU devices": lambda d: agent_pod(d)["volumes"].pop(),
    "ledger off the claim": lambda d: challenger_sts(d).pop("volumeClaimTemplates"),
    "keys read from the Secret itself":
        lambda d: challenger_sts(d)["template"]["spec"]["containers"][0]["volumeMounts"].__setitem__(
            1, {"name": "secret-keys", "mountPath": "/etc/wipeproof/keys", "readOnly": True}),
    "keys copied without mode 0600":
        lambda d: challenger_sts(d)["template"]["spec"]["initContainers"][0].__setitem__("command", ["cp"]),
    "wrong namespace": lambda d: find(d, "Service", "wipeproof-agent-metrics")["metadata"].__setitem__("namespace", "x"),
    "replicas without shards": lambda d: challenger_sts(d).__setitem__("replicas", 3),
    "no eviction right": lambda d: find(d, "ClusterRole", "wipeproof-challenger-drain")["rules"].pop(2),
    "the authority's secret key in the inspected cluster":
        lambda d: add_doc(d, "inspected-cluster", secret_with("inspect-authority.key")),
    "the challenger's secret key in the inspected cluster":
        lambda d: add_doc(d, "inspected-cluster", secret_with("inspect-challenger.key")),
    "the agent pins a secret key":
        lambda d: agent_pod(d)["containers"][0]["args"].append("--authority_key=/etc/wipeproof/trust/x.priv"),
    "the authority's secret key in the challenger":
        lambda d: challenger_sts(d)["template"]["spec"]["containers"][0]["args"].append(
            "--authority_key=/etc/wipeproof/keys/inspect-authority.key"),
    "the challenger not under a delegation":
        lambda d: challenger_sts(d)["template"]["spec"]["containers"][0].__setitem__("args", [
            a for a in challenger_sts(d)["template"]["spec"]["containers"][0]["args"]
            if not a.startswith("--delegation=")]),
    "the challenger in the inspected cluster":
        lambda d: d.__setitem__(slice(None), [(w.replace("authority-cluster", "inspected-cluster"), x) for w, x in d]),
    "the challenger not pinned": lambda d: challenger_sts(d)["template"]["spec"].pop("nodeSelector"),
    "no NetworkPolicy": lambda d: remove(d, "NetworkPolicy"),
    "a NetworkPolicy admitting anyone":
        lambda d: find(d, "NetworkPolicy", "wipeproof-challenger")["spec"]["ingress"][0].pop("from"),
    "a NetworkPolicy letting out any port":
        lambda d: find(d, "NetworkPolicy", "wipeproof-challenger")["spec"]["egress"].append({"to": [{}]}),
}


def self_check(docs):
    failed = False
    for name, breaker in BREAKS.items():
        broken = copy.deepcopy(docs)
        breaker(broken)
        errors = check(broken)
        if not errors:
            print(f"FAIL: self-check: '{name}' was not caught")
            failed = True
        else:
            print(f"caught '{name}': {errors[0]}")
    return not failed


def main():
    folder = sys.argv[1]
    docs = load(folder)
    if "--self-check" in sys.argv[2:]:
        return 0 if self_check(docs) else 1
    errors = check(docs)
    for e in errors:
        print(f"FAIL: {e}")
    if errors:
        return 1
    print(f"PASS: {len(docs)} objects in {folder}: " + ", ".join(sorted({d['kind'] for _, d in docs})))
    return 0


if __name__ == "__main__":
    sys.exit(main())
