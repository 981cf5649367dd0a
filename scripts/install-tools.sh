#!/usr/bin/env bash
# Installs the pinned emulators the tests run against into .tools/ (git-ignored),
# skipping what is already there: versitygw (S3), fake-gcs-server (GCS), Azurite (Azure Blob),
# and the opa CLI the policy tests cross-check against.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tools="$root/.tools"
mkdir -p "$tools/bin"
export GOBIN="$tools/bin"
if [ ! -x "$tools/bin/versitygw" ]; then
  echo "installing versitygw v1.8.0" >&2
  go install github.com/versity/versitygw/cmd/versitygw@v1.8.0
fi
if [ ! -x "$tools/bin/fake-gcs-server" ]; then
  echo "installing fake-gcs-server v1.56.1" >&2
  go install github.com/fsouza/fake-gcs-server@v1.56.1
fi
if [ ! -x "$tools/bin/opa" ]; then
  echo "installing opa v1.22.3 (the policy tests cross-check the default policies with opa check --strict and opa test)" >&2
  go install github.com/open-policy-agent/opa@v1.22.3
fi
if [ ! -x "$tools/node_modules/.bin/azurite-blob" ]; then
  echo "installing azurite 3.37.0" >&2
  npm install --prefix "$tools" --no-audit --no-fund --loglevel=error azurite@3.37.0 >&2
fi
if [ ! -f "$tools/duckdb/node_modules/@duckdb/node-api/package.json" ]; then
  echo "installing @duckdb/node-api 1.5.6-r.1 (the Parquet and Delta tests read ckgate's files back with DuckDB)" >&2
  mkdir -p "$tools/duckdb"
  npm install --prefix "$tools/duckdb" --no-audit --no-fund --loglevel=error @duckdb/node-api@1.5.6-r.1 >&2
fi
if ! command -v rclone >/dev/null; then
  echo "installing Debian's rclone (the serve tests drive the S3 front door with it)" >&2
  if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get install -y --no-install-recommends rclone >&2
fi
