#!/usr/bin/env bash
# Runs manifests_test.py on the manifests beside it with the real binaries (Bazel runs this in
# the runfiles tree, where the paths below are the data of //deploy/kubernetes:manifests_test).
exec /usr/bin/python3 deploy/kubernetes/manifests_test.py deploy/kubernetes \
  cli/fabricctl agent/fabric-agent controller/fabric-controller
