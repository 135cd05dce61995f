#!/usr/bin/env bash
# Builds Garage (the S3-compatible store the S3 tests and e2e specs run against) once, into a
# cache outside the repository. Does nothing when the binary is already there.
set -euo pipefail
root="${HOME}/.cache/ferry/garage-2.5.0"
bin="$root/bin/garage"
if [[ -x $bin ]]; then
  exit 0
fi
echo "ensure-garage: building Garage 2.5.0 into $root (about 9 minutes)"
cargo install garage --version 2.5.0 --locked --no-default-features \
  --features bundled-libs,sqlite --root "$root"
