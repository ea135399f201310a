#!/usr/bin/env bash
# gpu_copy (pinned host memory to and from each GPU, 64 MiB, 20 copies) against the PCIe limit
# of the GPU's own link at its maximum (max_link_speed and max_link_width in sysfs: an idle GPU
# drops its current link speed, so the current one, read after the copies, would understate
# the limit): GT/s x lanes x 128/130 (8 GT/s and up; 8/10 below)
# / 8 per direction, 63.0 GB/s for Gen5 x16, and against a reference copy in the same run:
# PyTorch's pinned-memory copy_ (non_blocking, same size and count, timed with CUDA events)
# where torch imports. Goal: >= 80 % of the limit both ways, and on a par with PyTorch.
# Needs NVIDIA GPUs.
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
            gpus.append((os.path.basename(dev), read("max_link_speed"), int(read("max_link_width"))))
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
# The reference: PyTorch's pinned copy, per GPU, same size and count.
reference=$(python3 - <<'PY' 2>&1
import sys
try:
    import torch
except Exception as e:  # not installed: say so, the limit comparison stands alone
    sys.exit(f"reference: PyTorch not importable here ({e.__class__.__name__}); limit comparison only")
size, count = 64 << 20, 20
for g in range(torch.cuda.device_count()):
    with torch.cuda.device(g):
        host = torch.empty(size, dtype=torch.uint8, pin_memory=True)
        dev = torch.empty(size, dtype=torch.uint8, device=f"cuda:{g}")
        def rate(dst, src):
            dst.copy_(src, non_blocking=True); torch.cuda.synchronize()
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(count):
                dst.copy_(src, non_blocking=True)
            stop.record(); torch.cuda.synchronize()
            return size * count / (start.elapsed_time(stop) / 1e3) / 1e9
        print(f"PyTorch {torch.__version__} GPU {g}: H2D {rate(dev, host):.1f} GB/s   D2H {rate(host, dev):.1f} GB/s")
PY
) || true
{
  machine
  echo "command: bench/gpu_copy_vs_pcie.sh  (fabricctl check --probes gpu_copy: 64 MiB, 20 pinned copies each way per GPU)"
  echo "$report"
  echo "$reference"
} | tee "$RESULTS/gpu_copy_vs_pcie.txt"
