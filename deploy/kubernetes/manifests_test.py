#!/usr/bin/env python3
"""Parses every manifest of deploy/kubernetes and checks what fabric-agent and fabric-controller
need from them: the agent's host network, capability, devices, host paths, node name, address,
GPUs and TLS; the controller's single replica, database volume, Service and non-root context;
that every flag the manifests pass is one the real binaries have; and that the real fabricctl
loads the ConfigMap's configuration. Prints PASS/FAIL lines and ends with "N passed, N failed";
exits 1 when any check failed.

    manifests_test.py MANIFEST_DIR FABRICCTL FABRIC_AGENT FABRIC_CONTROLLER
"""
import os
import posixpath
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

directory, fabricctl, fabric_agent, fabric_controller = sys.argv[1:5]
NAMESPACE = "fabricctl"
passed = failed = 0


def check(what, test):
    """Runs test(); True passes, False or a string (the reason) fails, and so does an exception."""
    global passed, failed
    try:
        result = test()
    except Exception as e:  # a missing key or object is a failed check, not a crashed test
        result = f"{type(e).__name__}: {e}"
    if result is True:
        passed += 1
        print(f"PASS: {what}")
    else:
        failed += 1
        print(f"FAIL: {what}" + (f" ({result})" if isinstance(result, str) else ""))


# --- The files -------------------------------------------------------------------------------
manifests = sorted(n for n in os.listdir(directory) if n.endswith(".yaml"))
docs = {}  # (kind, name) -> object


def load(name):
    with open(os.path.join(directory, name)) as f:
        loaded = [d for d in yaml.safe_load_all(f) if d is not None]
    for d in loaded:
        if not isinstance(d, dict) or not d.get("kind") or not d.get("apiVersion"):
            return "a document without apiVersion or kind"
        docs[(d["kind"], d.get("metadata", {}).get("name"))] = d
    return bool(loaded) or "no document"


for name in manifests:
    check(f"{name} parses (yaml.safe_load_all), every document with apiVersion and kind",
          lambda: load(name))


def get(kind, name):
    if (kind, name) not in docs:
        raise KeyError(f"no {kind} {name}")
    return docs[(kind, name)]


def resources_listed():
    listed = get("Kustomization", None)["resources"]
    others = [n for n in manifests if n != "kustomization.yaml"]
    return sorted(listed) == others or f"lists {sorted(listed)}, the directory has {others}"


check("kustomization.yaml lists every manifest", resources_listed)


def all_namespaced():
    get("Namespace", NAMESPACE)
    wrong = [f"{k} {n}" for (k, n), d in docs.items()
             if k not in ("Namespace", "Kustomization")
             and d.get("metadata", {}).get("namespace") != NAMESPACE]
    return not wrong or f"outside {NAMESPACE}: {wrong}"


check(f"the Namespace {NAMESPACE} exists and holds every object", all_namespaced)


# --- Helpers -----------------------------------------------------------------------------------
def pod_spec(kind, name):
    return get(kind, name)["spec"]["template"]["spec"]


def container(kind, name):
    return pod_spec(kind, name)["containers"][0]


def all_containers():
    for (kind, name), d in sorted(docs.items(), key=str):
        if kind in ("DaemonSet", "Deployment", "StatefulSet", "Job", "Pod"):
            spec = d["spec"] if kind == "Pod" else d["spec"]["template"]["spec"]
            for c in spec.get("initContainers", []) + spec.get("containers", []):
                yield f"{kind} {name}/{c.get('name')}", c


def flag(c, name):
    """The value of --name=VALUE or --name VALUE in the container's args; None when absent."""
    args = c.get("args", [])
    for i, a in enumerate(args):
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
        if a == name and i + 1 < len(args):
            return args[i + 1]
    return None


def port_of(address):
    return int(address.rsplit(":", 1)[1])


def volume_at(kind, name, path):
    """(mount, volume) of the container's mount that holds `path` (the deepest one)."""
    c = container(kind, name)
    best = None
    for m in c.get("volumeMounts", []):
        mp = m["mountPath"].rstrip("/")
        if path == mp or path.startswith(mp + "/"):
            if best is None or len(mp) > len(best["mountPath"].rstrip("/")):
                best = m
    if best is None:
        raise KeyError(f"nothing mounted at {path}")
    volumes = {v["name"]: v for v in pod_spec(kind, name).get("volumes", [])}
    return best, volumes[best["name"]]


def env_field(c, var):
    return {e["name"]: e for e in c.get("env", [])}[var]["valueFrom"]["fieldRef"]["fieldPath"]


def env_value(c, var):
    return {e["name"]: e for e in c.get("env", [])}[var].get("value")


# The ConfigMap's configuration and the Service, which the workloads are checked against.
config_text = ""
config = {}


def config_parses():
    global config_text, config
    config_text = get("ConfigMap", "fabricctl-config")["data"]["fabricctl.yaml"]
    config = yaml.safe_load(config_text)
    return isinstance(config, dict) or "not a mapping"


check("configmap.yaml: fabricctl-config's fabricctl.yaml parses", config_parses)


def service_address():
    svc = get("Service", "fabric-controller")
    grpc = {p["name"]: p["port"] for p in svc["spec"]["ports"]}["grpc"]
    return f"{svc['metadata']['name']}.{svc['metadata']['namespace']}.svc:{grpc}"


check("configuration: controller is the Service fabric-controller's DNS name and gRPC port",
      lambda: config["controller"] == service_address()
      or f"{config['controller']} != {service_address()}")

SECRET_KEYS = {"cert": "tls.crt", "key": "tls.key", "ca": "ca.crt"}  # what README.md creates


def tls_matches(kind, name, secret):
    """--tls-* flags equal the configuration's tls paths, each a key of `secret`, mounted."""
    c = container(kind, name)
    for key, secret_key in SECRET_KEYS.items():
        path = flag(c, f"--tls-{key}")
        if path != config["tls"][key]:
            return f"--tls-{key} {path} != configuration's tls.{key} {config['tls'][key]}"
        mount, volume = volume_at(kind, name, path)
        if volume.get("secret", {}).get("secretName") != secret:
            return f"{path} is not in the Secret {secret}"
        if posixpath.relpath(path, mount["mountPath"]) != secret_key:
            return f"{path} is not the Secret's key {secret_key}"
        if not mount.get("readOnly"):
            return f"{mount['mountPath']} is not read-only"
    return True


def config_mounted(kind, name):
    mount, volume = volume_at(kind, name, "/etc/fabricctl/fabricctl.yaml")
    key = mount.get("subPath")
    if volume.get("configMap", {}).get("name") != "fabricctl-config":
        return "not the ConfigMap fabricctl-config"
    if mount["mountPath"] == "/etc/fabricctl/fabricctl.yaml":
        ok = key in get("ConfigMap", "fabricctl-config")["data"]
    else:  # the whole ConfigMap as a directory
        ok = mount["mountPath"] == "/etc/fabricctl" and not key
    return ok or "mounted at the wrong place or key"


def writable(kind, name, path):
    mount, volume = volume_at(kind, name, path)
    return not mount.get("readOnly") and ("emptyDir" in volume or "persistentVolumeClaim" in volume)


# --- The agent ---------------------------------------------------------------------------------
DS = ("DaemonSet", "fabric-agent")
agent = lambda: container(*DS)  # noqa: E731

check("agent: hostNetwork (it measures the host's own fabric)",
      lambda: pod_spec(*DS).get("hostNetwork") is True)
check("agent: dnsPolicy ClusterFirstWithHostNet (the Service's name resolves on the host network)",
      lambda: pod_spec(*DS).get("dnsPolicy") == "ClusterFirstWithHostNet")
check("agent: capability IPC_LOCK added and no other, the rest dropped",
      lambda: agent()["securityContext"]["capabilities"].get("add") == ["IPC_LOCK"]
      and agent()["securityContext"]["capabilities"].get("drop") == ["ALL"])


def infiniband():
    mount, volume = volume_at(*DS, "/dev/infiniband")
    return (mount["mountPath"] == "/dev/infiniband"
            and volume.get("hostPath", {}).get("path") == "/dev/infiniband")


check("agent: the host's /dev/infiniband mounted at /dev/infiniband", infiniband)


def host_trees():
    root = flag(agent(), "--sysfs-root")
    for tree in ("sys", "proc"):
        path = posixpath.join(root, tree)
        mount, volume = volume_at(*DS, path)
        if mount["mountPath"] != path or volume.get("hostPath", {}).get("path") != f"/{tree}":
            return f"the host's /{tree} is not at {path}"
        if not mount.get("readOnly"):
            return f"{path} is writable"
    return root != "/" or "--sysfs-root / reads the container's own /sys and /proc"


check("agent: the host's /sys and /proc read-only under --sysfs-root", host_trees)
check("agent: NODE_NAME from the downward API (spec.nodeName) and --node-name=$(NODE_NAME)",
      lambda: env_field(agent(), "NODE_NAME") == "spec.nodeName"
      and flag(agent(), "--node-name") == "$(NODE_NAME)")
check("agent: --advertise is $(NODE_IP) (status.hostIP) at the --listen port",
      lambda: env_field(agent(), "NODE_IP") == "status.hostIP"
      and flag(agent(), "--advertise") == f"$(NODE_IP):{port_of(flag(agent(), '--listen'))}")
check("agent: --controller is the configuration's and the Service's",
      lambda: flag(agent(), "--controller") == config["controller"] == service_address()
      or f"--controller {flag(agent(), '--controller')}")
check("agent: --tls-cert/--tls-key/--tls-ca in the Secret fabricctl-agent-tls, as the configuration",
      lambda: tls_matches(*DS, "fabricctl-agent-tls"))
check("agent: the ConfigMap at /etc/fabricctl/fabricctl.yaml", lambda: config_mounted(*DS))


def gpus():
    caps = set((env_value(agent(), "NVIDIA_DRIVER_CAPABILITIES") or "").split(","))
    resources = agent().get("resources", {})
    taken = [k for part in ("requests", "limits") for k in resources.get(part, {})
             if k.startswith("nvidia.com/")]
    if taken:
        return f"requests {taken}: GPUs taken from jobs"
    return (env_value(agent(), "NVIDIA_VISIBLE_DEVICES") == "all" and {"compute", "utility"} <= caps
            or "NVIDIA_VISIBLE_DEVICES=all and NVIDIA_DRIVER_CAPABILITIES compute,utility wanted")


check("agent: every GPU through the container toolkit's variables, no nvidia.com/gpu requested", gpus)
check("agent: tolerates the nvidia.com/gpu taint",
      lambda: any(t.get("key") == "nvidia.com/gpu" and t.get("operator") == "Exists"
                  for t in pod_spec(*DS).get("tolerations", [])))


def agent_port():
    port = port_of(flag(agent(), "--listen"))
    ports = agent()["ports"][0]
    return (ports["containerPort"] == port and ports.get("hostPort", port) == port
            and agent()["readinessProbe"]["tcpSocket"]["port"] == port
            and agent()["livenessProbe"]["tcpSocket"]["port"] == port
            or f"--listen port {port} is not the container's and the probes' port")


check("agent: readiness and liveness probe the --listen port (tcpSocket)", agent_port)
check("agent: --nccl-log-dir, /tmp and /dev/shm writable (the root file system is read-only)",
      lambda: all(writable(*DS, p) for p in (flag(agent(), "--nccl-log-dir"), "/tmp", "/dev/shm"))
      and volume_at(*DS, "/dev/shm")[1]["emptyDir"].get("medium") == "Memory")

# --- The controller ----------------------------------------------------------------------------
DEP = ("Deployment", "fabric-controller")
ctl = lambda: container(*DEP)  # noqa: E731
check("controller: one replica, strategy Recreate (its database is locked by the running one)",
      lambda: get(*DEP)["spec"]["replicas"] == 1 and get(*DEP)["spec"]["strategy"]["type"] == "Recreate")


def database():
    db = flag(ctl(), "--db")
    mount, volume = volume_at(*DEP, db)
    claim = volume["persistentVolumeClaim"]["claimName"]
    pvc = get("PersistentVolumeClaim", claim)["spec"]
    return (claim == "fabricctl-controller-state" and not mount.get("readOnly")
            and mount["mountPath"] == posixpath.dirname(db)  # DB.lock is made beside it
            and pvc["accessModes"] == ["ReadWriteOnce"] and pvc["resources"]["requests"]["storage"] == "1Gi"
            or f"--db {db} is not on the claim fabricctl-controller-state (1Gi ReadWriteOnce)")


check("controller: --db in the mounted PersistentVolumeClaim fabricctl-controller-state", database)


def service_ports():
    svc = get("Service", "fabric-controller")["spec"]
    ports = {p["name"]: p for p in svc["ports"]}
    container_ports = {p["name"]: p["containerPort"] for p in ctl()["ports"]}
    for name, listen in (("grpc", "--listen"), ("metrics", "--metrics-listen")):
        address = flag(ctl(), listen)
        if not address.startswith("0.0.0.0:"):
            return f"{listen} {address} is not reachable from the Service"
        target = ports[name].get("targetPort", ports[name]["port"])
        target = container_ports[target] if isinstance(target, str) else target
        if not ports[name]["port"] == target == container_ports[name] == port_of(address):
            return f"Service port {name} does not lead to {listen} {address}"
    labels = get(*DEP)["spec"]["template"]["metadata"]["labels"]
    return all(labels.get(k) == v for k, v in svc["selector"].items()) or "selector misses the pods"


check("controller: the Service's grpc and metrics ports are --listen's and --metrics-listen's",
      service_ports)
check("controller: prometheus.io annotations scrape the metrics port",
      lambda: get("Service", "fabric-controller")["metadata"]["annotations"]["prometheus.io/scrape"] == "true"
      and int(get("Service", "fabric-controller")["metadata"]["annotations"]["prometheus.io/port"])
      == port_of(flag(ctl(), "--metrics-listen")))


def non_root():
    pod = pod_spec(*DEP).get("securityContext", {})
    sc = ctl().get("securityContext", {})
    user = sc.get("runAsUser", pod.get("runAsUser"))
    return (pod.get("runAsNonRoot") is True and user not in (None, 0) and pod.get("fsGroup") is not None
            and sc.get("readOnlyRootFilesystem") is True and sc["capabilities"]["drop"] == ["ALL"]
            and not sc["capabilities"].get("add")
            or "wants runAsNonRoot, a non-zero runAsUser, fsGroup, read-only root, no capability")


check("controller: non-root, fsGroup (the volume writable), read-only root, every capability dropped",
      non_root)
check("controller: liveness probes the --listen port (tcpSocket)",
      lambda: ctl()["livenessProbe"]["tcpSocket"]["port"] == port_of(flag(ctl(), "--listen")))
check("controller: --tls-cert/--tls-key/--tls-ca in the Secret fabricctl-controller-tls, as the configuration",
      lambda: tls_matches(*DEP, "fabricctl-controller-tls"))
check("controller: the ConfigMap at /etc/fabricctl/fabricctl.yaml", lambda: config_mounted(*DEP))
check("controller: /tmp writable (SQLite's temporary files; the root is read-only)",
      lambda: writable(*DEP, "/tmp"))

# --- Every container ---------------------------------------------------------------------------
containers = list(all_containers())
check("there are containers to check", lambda: len(containers) >= 2)
for what, c in containers:
    check(f"{what}: image and command set, the image README.md builds",
          lambda: bool(c.get("image")) and bool(c.get("command"))
          and f"-t {c['image']} " in open(os.path.join(directory, "README.md")).read())
    check(f"{what}: not privileged, no privilege escalation",
          lambda: c.get("securityContext", {}).get("privileged") is not True
          and c.get("securityContext", {}).get("allowPrivilegeEscalation") is False)
    check(f"{what}: memory requested and limited",
          lambda: bool(c["resources"]["requests"]["memory"]) and bool(c["resources"]["limits"]["memory"]))

BINARIES = {"/usr/bin/fabric-agent": fabric_agent, "/usr/bin/fabric-controller": fabric_controller,
            "/usr/bin/fabricctl": fabricctl}


def flags_known(c):
    binary = BINARIES[c["command"][0]]
    help_text = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=30).stdout
    known = set(re.findall(r"(--[a-z][a-z0-9-]*)", help_text))
    used = [a.split("=", 1)[0] for a in c.get("args", []) if a.startswith("--")]
    unknown = [f for f in used if f not in known]
    if unknown:
        return f"{binary} has no {unknown}"
    fmt = flag(c, "--log-format")
    return fmt in (None, "text", "json") or f"--log-format {fmt}"


for what, c in containers:
    check(f"{what}: every flag is one the real binary has (--help)", lambda: flags_known(c))

# --- The ConfigMap's configuration in the real fabricctl -----------------------------------------
# A configuration error names the file and the line: "FILE:LINE: key: ...".
tmp = tempfile.mkdtemp()


def fabricctl_with(text, *args):
    path = os.path.join(tmp, "fabricctl.yaml")
    with open(path, "w") as f:
        f.write(text)
    run = subprocess.run([fabricctl, "--config", path, "nodes", "--timeout", "1s", *args],
                         capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin"})
    config_error = re.search(re.escape(path) + r":\d+: ", run.stderr)
    return run, bool(config_error), run.stderr.strip()[:200]


def without_tls():
    trimmed = dict(config)
    trimmed.pop("tls")  # the certificates exist only in the cluster
    return yaml.safe_dump(trimmed)


def negative_control():
    run, config_error, err = fabricctl_with(config_text + "no_such_key: 1\n")
    return (run.returncode == 3 and config_error) or f"an unknown key was not a configuration error: {err}"


def loads_as_is():
    run, config_error, err = fabricctl_with(config_text)
    # It gets as far as reading the certificates the configuration names.
    return (run.returncode == 3 and not config_error and config["tls"]["cert"] in err) or err


def names_controller():
    run, config_error, err = fabricctl_with(without_tls())
    # Without certificates it refuses plain text to the controller the configuration names.
    return (run.returncode == 3 and not config_error
            and config["controller"].rsplit(":", 1)[0] in err) or err


def dials():
    run, config_error, err = fabricctl_with(without_tls(), "--controller", "127.0.0.1:1")
    return (run.returncode == 3 and not config_error and "127.0.0.1:1" in err) or err


check("fabricctl: an unknown key is a configuration error (the checks below can tell)", negative_control)
check("fabricctl: loads the ConfigMap's configuration and reads the tls.cert it names", loads_as_is)
check("fabricctl: without tls, the configuration's controller is the one it would dial", names_controller)
check("fabricctl: without tls and with --controller 127.0.0.1:1, it dials and finds nobody", dials)

shutil.rmtree(tmp, ignore_errors=True)
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
