#!/usr/bin/env bash
# The store's tests (controller/store/store_test.cc) against a real PostgreSQL started here: every
# case that is not about SQLite's own file runs on both databases.
set -uo pipefail
source tests/postgres.sh
start_postgres
FABRIC_TEST_POSTGRES=$POSTGRES_URL "$1"
