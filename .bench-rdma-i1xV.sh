set -u
F=bazel-bin/cli/fabricctl
P="-d $RXE_DEV -x $RXE_GID_INDEX"
for r in $(seq 1 5); do
  ib_write_bw $P -s 65536 -n 2000 --report_gbits -F >/dev/null 2>&1 & sleep 0.5
  echo "perftest_bw $(ib_write_bw $P -s 65536 -n 2000 --report_gbits -F $RXE_IP 2>/dev/null | awk '$1 == 65536 {print $4}')"
  wait
  $F probe rdma_write_bw --server --port 7420 --one-off >/dev/null & sleep 0.5
  echo "ours_bw $($F probe rdma_write_bw $RXE_IP:7420 --sizes 64K --iters 2000 | awk '$1 == 65536 {print $4}')"
  wait
  ib_write_lat $P -s 2 -n 2000 -F >/dev/null 2>&1 & sleep 0.5
  echo "perftest_lat $(ib_write_lat $P -s 2 -n 2000 -F $RXE_IP 2>/dev/null | awk '$1 == 2 {print $5, $3}')"
  wait
  $F probe rdma_write_lat --server --port 7421 --one-off >/dev/null & sleep 0.5
  echo "ours_lat $($F probe rdma_write_lat $RXE_IP:7421 --sizes 2 --iters 2000 | awk '$1 == 2 {print $5, $3}')"
  wait
  ib_write_bw $P -s 65536 -n 2000 -q 4 --report_gbits -F >/dev/null 2>&1 & sleep 0.5
  echo "perftest_qps $(ib_write_bw $P -s 65536 -n 2000 -q 4 --report_gbits -F $RXE_IP 2>/dev/null | awk '$1 == 65536 {print $4}')"
  wait
  $F probe rdma_write_bw --server --port 7422 --one-off >/dev/null & sleep 0.5
  echo "ours_qps $($F probe rdma_write_bw $RXE_IP:7422 --sizes 64K --iters 2000 --qps 4 | awk '$1 == 65536 {print $4}')"
  wait
  ib_send_bw $P -s 65536 -n 2000 -b --report_gbits -F >/dev/null 2>&1 & sleep 0.5
  echo "perftest_bisend $(ib_send_bw $P -s 65536 -n 2000 -b --report_gbits -F $RXE_IP 2>/dev/null | awk '$1 == 65536 {print $4}')"
  wait
  $F probe rdma_send_bw --server --port 7423 --one-off >/dev/null & sleep 0.5
  echo "ours_bisend $($F probe rdma_send_bw $RXE_IP:7423 --sizes 64K --iters 2000 --bidirectional | awk '$1 == 65536 {print $4}')"
  wait
  ib_write_lat $P -s 2 -D 2 -F >/dev/null 2>&1 & sleep 0.5
  echo "perftest_latd $(ib_write_lat $P -s 2 -D 2 -F $RXE_IP 2>/dev/null | awk '$1 == 2 {print $3}')"
  wait
  $F probe rdma_write_lat --server --port 7424 --one-off >/dev/null & sleep 0.5
  echo "ours_latd $($F probe rdma_write_lat $RXE_IP:7424 --sizes 2 --duration 2s | awk '$1 == 2 {print $6}')"
  wait
done
