#!/usr/bin/env bash
# Installs what wipeproof's build and tests need on Debian 12 (run as root). Idempotent: packages
# already present are skipped, and nothing is fetched when all are there.
# Usage: scripts/setup-deps.sh [--with-hip]   (--with-hip adds Debian's HIP 5.2 for the AMD compile check)
set -euo pipefail

packages=(cmake ninja-build pkg-config g++ libsodium-dev capnproto libcapnp-dev libgflags-dev
          libgoogle-glog-dev libgtest-dev libgmock-dev googletest libsqlite3-dev sqlite3 libssl-dev
          nlohmann-json3-dev
          openssl   # tests/system/fault_process_test.sh: s_client, a TLS client without the pinned certificate
          python3 python3-nacl  # tests/system/audit_test.sh: docs/audit_recipe.py (Ed25519 via PyNaCl)
          python3-jsonschema  # tests/system/audit_test.sh: certificates against docs/certificate.schema.json
          prometheus  # tests/system/prometheus_*: promtool (check metrics/rules) and a real Prometheus server
          clang-15   # scripts/fuzz.sh: clang++-15 and libFuzzer (libclang-common-15-dev, a dependency)
          systemd    # tests/system/systemd_units_test.sh: systemd-analyze verify / security --offline
          dpkg-dev   # cpack -G DEB: dpkg-shlibdeps (tests/system/package_install_test.sh)
          slurmctld slurmd slurm-client munge  # tests/system/slurm_drain_test.sh: a one-node Slurm cluster
          slurmdbd slurm-wlm-mysql-plugin slurm-wlm-jwt-plugin mariadb-server  # slurm_token_test.sh: accounting, tokens
          python3-yaml  # tests/system/kubernetes_manifests_test.py: the manifests' offline check
          iproute2 curl  # tests/system/deploy_walkthrough_test.sh: the sandbox's veth address, Prometheus's API
          procps  # tests/system/sandbox_teardown_test.sh: ps and pgrep
          )
if [[ "${1:-}" == "--with-hip" || "${WIPEPROOF_WITH_HIP:-0}" == "1" ]]; then
  packages+=(hipcc libamdhip64-dev rocm-device-libs)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup-deps: all ${#packages[@]} packages present"
  exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "setup-deps: missing packages: ${missing[*]}; run as root or install them with apt-get" >&2
  exit 1
fi
echo "setup-deps: installing ${missing[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
