#!/usr/bin/env bash
# Runs manifests_test.py on the manifests beside it with the real fabricctl.
exec /usr/bin/python3 deploy/kubernetes/manifests_test.py deploy/kubernetes cli/fabricctl
