#!/usr/bin/env bash
# gpu_copy (pinned host memory to and from each GPU, 64 MiB, 20 copies) against the PCIe limit
# of the GPU's own link, read from sysfs: GT/s x lanes x 128/130 (8 GT/s and up; 8/10 below)
# / 8 per direction, 63.0 GB/s for Gen5 x16. Goal: >= 80 % both ways. Needs NVIDIA GPUs.
#
#   bench/gpu_copy_vs_pcie.sh
source "$(dirname "$0")/lib.sh"
need_build
# CUDA ordinals in PCI bus order, to match them with the devices in sysfs.
json=$(CUDA_DEVICE_ORDER=PCI_BUS_ID "$FABRICCTL" check --probes gpu_copy --format json) || true
report=$(python3 - "$json" <<'PY'
import glob, json, os, re, sys
r = json.loads(sys.argv[1])
audit = r["health"]["nodes"][0]["audits"][0]
if audit.get("outcome") != "AUDIT_RAN":
    sys.exit("bench: gpu_copy did not run here: " + audit.get("reason", "?"))
gpus = []
for dev in sorted(glob.glob("/sys/bus/pci/devices/*")):
    read = lambda f: open(os.path.join(dev, f)).read().strip()
    try:
        if read("vendor") == "0x10de" and read("class").startswith("0x0302"):
            gpus.append((os.path.basename(dev), read("current_link_speed"), int(read("current_link_width"))))
    except OSError:
        pass
for key, value in sorted(audit["observed"].items()):
    m = re.match(r"GPU (\d+) (\d+) B", key)
    if not m:
        continue
    if int(m.group(1)) >= len(gpus):
        sys.exit(f"bench: GPU {m.group(1)} is not an NVIDIA display controller in /sys/bus/pci")
    bus, speed, width = gpus[int(m.group(1))]
    gts = float(speed.split()[0])
    limit = gts * width * (128 / 130 if gts >= 8 else 0.8) / 8
    h2d, d2h = (float(x) for x in re.findall(r"([\d.]+) GB/s", value))
    print(f"GPU {m.group(1)} {bus} PCIe {speed} x{width}: limit {limit:.1f} GB/s   "
          f"H2D {h2d:.1f} GB/s ({h2d / limit:.3f})   D2H {d2h:.1f} GB/s ({d2h / limit:.3f})")
PY
) || exit 3
{
  machine
  echo "command: bench/gpu_copy_vs_pcie.sh  (fabricctl check --probes gpu_copy: 64 MiB, 20 pinned copies each way per GPU)"
  echo "$report"
} | tee "$RESULTS/gpu_copy_vs_pcie.txt"
