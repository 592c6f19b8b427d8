#!/usr/bin/env python3
"""Offline check of deploy/kubernetes (kubectl is not in Debian 12, so no `kubectl apply
--dry-run=client`): every document parses (PyYAML), has apiVersion/kind/metadata.name and the
wipeproof namespace; pod templates use only known field names (a typo is an error, as the API
server's strict field validation would make it), selectors match their template labels, every
volumeMount names a volume, every port name is a valid IANA_SVC_NAME; and what the issue asks of
each object: the agent DaemonSet has a GPU node selector, only the IPC_LOCK capability and the GPU
devices; the challenger StatefulSet keeps its ledger on a volume claim and reads its keys from a Secret
copied by an init container into a memory folder with mode 0600 (fsGroup would make the Secret 0440), its Service exists; the ServiceMonitor selects Services whose ports it names; the RBAC
lets the challenger cordon, evict and annotate.

Usage: kubernetes_manifests_test.py DEPLOY_KUBERNETES_DIR [--self-check]
--self-check: breaks copies of the manifests in known ways and expects each to be caught.
"""
import copy
import glob
import os
import re
import sys

import yaml

NAMESPACED = {"DaemonSet", "StatefulSet", "Service", "ServiceAccount", "ServiceMonitor", "ConfigMap", "Secret"}
API_VERSIONS = {
    "Namespace": "v1", "Service": "v1", "ServiceAccount": "v1", "ConfigMap": "v1", "Secret": "v1",
    "DaemonSet": "apps/v1", "StatefulSet": "apps/v1",
    "ClusterRole": "rbac.authorization.k8s.io/v1", "ClusterRoleBinding": "rbac.authorization.k8s.io/v1",
    "ServiceMonitor": "monitoring.coreos.com/v1",
}
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
    docs = []
    for path in sorted(glob.glob(os.path.join(folder, "*.yaml"))):
        with open(path) as f:
            for i, doc in enumerate(yaml.safe_load_all(f)):
                if doc is not None:
                    docs.append((f"{os.path.basename(path)}#{i}", doc))
    return docs


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

    agents = [d for _, d in by_kind.get("DaemonSet", []) if d["metadata"]["name"] == "wipeproof-agent"]
    if len(agents) != 1:
        errors.append("no DaemonSet wipeproof-agent")
    else:
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

    challengers = [d for _, d in by_kind.get("StatefulSet", []) if d["metadata"]["name"] == "wipeproof-challenger"]
    if len(challengers) != 1:
        errors.append("no StatefulSet wipeproof-challenger")
    else:
        sts = challengers[0]["spec"]
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
        key_args = [a.split("=", 1)[1] for a in container.get("args", []) if a.startswith(("--authority_key=",
                                                                                           "--challenger_key="))]
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
        selected = [d for _, d in by_kind.get("Service", [])
                    if all(d["metadata"].get("labels", {}).get(k) == v for k, v in selector.items())]
        if len(selected) < 2:
            errors.append(f"{where}: selects {len(selected)} Services, want the agents' and the challenger's")
        for ep in mon["spec"]["endpoints"]:
            for svc in selected:
                if ep["port"] not in {p.get("name") for p in svc["spec"]["ports"]}:
                    errors.append(f"{where}: Service {svc['metadata']['name']} has no port {ep['port']}")

    rules = [r for _, d in by_kind.get("ClusterRole", []) for r in d.get("rules", [])]
    def allowed(resource, verb):
        return any(resource in r["resources"] and verb in r["verbs"] for r in rules)
    for resource, verb in (("nodes", "patch"), ("pods/eviction", "create"), ("pods", "list"), ("daemonsets", "get")):
        if not allowed(resource, verb):
            errors.append(f"RBAC: the challenger may not {verb} {resource} (kubectl drain needs it)")
    return errors


def find(docs, kind, name):
    return next(d for _, d in docs if d["kind"] == kind and d["metadata"]["name"] == name)


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
