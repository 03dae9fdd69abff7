#!/usr/bin/env bash
# interop-deps.sh: installs the pinned npm clients of the interop tests (zarrita) from
# tests/interop/package-lock.json, once; later runs return at once.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../tests/interop"
stamp=node_modules/.h5zarr-lock-hash
want=$(sha256sum package-lock.json | cut -c1-16)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then exit 0; fi
if ! npm ci --no-audit --no-fund >npm.log 2>&1; then
    tail -n 10 npm.log >&2
    echo "interop-deps: FAILED: npm ci (log: $PWD/npm.log)" >&2
    exit 1
fi
echo "$want" >"$stamp"
