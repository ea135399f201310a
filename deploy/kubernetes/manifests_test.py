#!/usr/bin/env python3
"""Parses every manifest of deploy/kubernetes and checks what fabric-agent and
fabric-controller need from them; the ConfigMap's fabricctl.yaml is loaded by the real
fabricctl. Prints PASS/FAIL lines and ends with "N passed, N failed".

    manifests_test.py MANIFEST_DIR FABRICCTL
"""
import os
import subprocess
import sys
import tempfile

import yaml

directory, fabricctl = sys.argv[1], sys.argv[2]
passed = failed = 0


def check(what, ok):
    global passed, failed
    print(("PASS: " if ok else "FAIL: ") + what)
    if ok:
        passed += 1
    else:
        failed += 1


docs = {}
for name in sorted(os.listdir(directory)):
    if not name.endswith(".yaml"):
        continue
    try:
        with open(os.path.join(directory, name)) as f:
            loaded = [d for d in yaml.safe_load_all(f) if d]
        check(f"{name} parses", True)
    except yaml.YAMLError as e:
        check(f"{name} parses: {e}", False)
        continue
    for d in loaded:
        docs[(d.get("kind"), d.get("metadata", {}).get("name"))] = d

kustomization = docs.get(("Kustomization", None), {})
listed = set(kustomization.get("resources", []))
check("kustomization lists every manifest",
      listed == {n for n in os.listdir(directory) if n.endswith(".yaml") and n != "kustomization.yaml"})

config_map = docs[("ConfigMap", "fabricctl-config")]
config = yaml.safe_load(config_map["data"]["fabricctl.yaml"])
service = docs[("Service", "fabric-controller")]
ports = {p["name"]: p["port"] for p in service["spec"]["ports"]}
check("the configuration's controller is the Service's gRPC port",
      config["controller"] == f"fabric-controller.fabricctl.svc:{ports['grpc']}")


def container(kind, name):
    return docs[(kind, name)]["spec"]["template"]["spec"]["containers"][0]


def mounts(c):
    return {m["mountPath"]: m for m in c.get("volumeMounts", [])}


def flag(c, name):
    for a in c.get("args", []):
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return None


# --- The agent -----------------------------------------------------------------------------------
agent_ds = docs[("DaemonSet", "fabric-agent")]
pod = agent_ds["spec"]["template"]["spec"]
agent = container("DaemonSet", "fabric-agent")
check("agent: hostNetwork (it measures the host's fabric)", pod.get("hostNetwork") is True)
check("agent: ClusterFirstWithHostNet (the Service name resolves)",
      pod.get("dnsPolicy") == "ClusterFirstWithHostNet")
caps = agent["securityContext"]["capabilities"]
check("agent: IPC_LOCK added, everything else dropped", caps.get("add") == ["IPC_LOCK"] and caps.get("drop") == ["ALL"])
check("agent: not privileged", agent["securityContext"].get("privileged") is not True)
volumes = {v["name"]: v for v in pod["volumes"]}
m = mounts(agent)
check("agent: /dev/infiniband from the host",
      "/dev/infiniband" in m and volumes[m["/dev/infiniband"]["name"]]["hostPath"]["path"] == "/dev/infiniband")
env = {e["name"]: e for e in agent["env"]}
check("agent: NODE_NAME from the downward API (spec.nodeName)",
      env["NODE_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName")
check("agent: --node-name is $(NODE_NAME)", flag(agent, "--node-name") == "$(NODE_NAME)")
check("agent: --advertise is the host's IP", flag(agent, "--advertise") == "$(NODE_IP):7401"
      and env["NODE_IP"]["valueFrom"]["fieldRef"]["fieldPath"] == "status.hostIP")
root = flag(agent, "--sysfs-root")
check("agent: host /sys and /proc read-only under --sysfs-root",
      all(m.get(f"{root}/{d}", {}).get("readOnly") and volumes[m[f"{root}/{d}"]["name"]]["hostPath"]["path"] == f"/{d}"
          for d in ("sys", "proc")))
check("agent: GPUs through the container toolkit, none taken from jobs",
      env.get("NVIDIA_VISIBLE_DEVICES", {}).get("value") == "all"
      and "nvidia.com/gpu" not in str(agent.get("resources", {})))
tls_dir = os.path.dirname(config["tls"]["cert"])
check("agent: the TLS Secret is mounted where the configuration points",
      tls_dir in m and volumes[m[tls_dir]["name"]]["secret"]["secretName"] == "fabricctl-agent-tls"
      and all(os.path.dirname(config["tls"][k]) == tls_dir for k in ("cert", "key", "ca")))
check("agent: the configuration at /etc/fabricctl/fabricctl.yaml",
      m["/etc/fabricctl/fabricctl.yaml"]["subPath"] == "fabricctl.yaml")
check("agent: the listen port is the probed one", flag(agent, "--listen") == "0.0.0.0:7401"
      and agent["readinessProbe"]["tcpSocket"]["port"] == 7401)

# --- The controller --------------------------------------------------------------------------------
deploy = docs[("Deployment", "fabric-controller")]
ctl = container("Deployment", "fabric-controller")
cm = mounts(ctl)
check("controller: one replica, replaced not rolled (its database is locked)",
      deploy["spec"]["replicas"] == 1 and deploy["spec"]["strategy"]["type"] == "Recreate")
db = flag(ctl, "--db")
state_mount = next((p for p in cm if db and db.startswith(p + "/")), None)
cvolumes = {v["name"]: v for v in deploy["spec"]["template"]["spec"]["volumes"]}
check("controller: --db on the PersistentVolumeClaim",
      state_mount is not None and cvolumes[cm[state_mount]["name"]]["persistentVolumeClaim"]["claimName"]
      == docs[("PersistentVolumeClaim", "fabricctl-controller-state")]["metadata"]["name"])
check("controller: Service ports are --listen's and --metrics-listen's",
      flag(ctl, "--listen").endswith(f":{ports['grpc']}") and flag(ctl, "--metrics-listen").endswith(f":{ports['metrics']}"))
check("controller: runs as non-root, no capabilities, writable volume (fsGroup)",
      deploy["spec"]["template"]["spec"]["securityContext"].get("runAsNonRoot") is True
      and ctl["securityContext"]["capabilities"]["drop"] == ["ALL"]
      and "fsGroup" in deploy["spec"]["template"]["spec"]["securityContext"])
check("controller: TLS from its own Secret, where the configuration points",
      cvolumes[cm[tls_dir]["name"]]["secret"]["secretName"] == "fabricctl-controller-tls")
for (kind, name), d in docs.items():
    if kind in ("DaemonSet", "Deployment"):
        for c in d["spec"]["template"]["spec"]["containers"]:
            check(f"{name}: image and command set", bool(c.get("image")) and bool(c.get("command")))

# --- The ConfigMap's configuration, loaded by the real program ------------------------------------
without_tls = dict(config)
without_tls.pop("tls")  # the certificates exist only in the cluster
with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
    yaml.safe_dump(without_tls, f)
run = subprocess.run([fabricctl, "--config", f.name, "nodes", "--timeout", "1s"],
                     capture_output=True, text=True, timeout=30)
os.unlink(f.name)
check("the configuration loads in fabricctl and names the controller it dials "
      f"(got: {run.stderr.strip()[:120]})",
      run.returncode == 3 and "fabric-controller.fabricctl.svc" in run.stderr and f.name not in run.stderr)

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
