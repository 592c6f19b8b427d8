#!/usr/bin/env bash
# The Debian packages wipeproof-agent and wipeproof-challenger, as `cpack -G DEB` built them from the
# build folder (the ctest fixture package_debs, into DEBS_DIR): each carries its binary, systemd unit,
# example configuration and docs, its library dependencies (dpkg-shlibdeps) and the postinst; both are unpacked into a clean folder (dpkg-deb -x:
# the system is not touched) and the installed binaries answer --help and run a
# wipe session on loopback (tests/system/e2e_loopback_test.sh, 64 MiB of host memory).
# Usage: package_install_test.sh DEBS_DIR SOURCE_DIR
set -euo pipefail
debs=${1:?usage: package_install_test.sh DEBS_DIR SOURCE_DIR}
src=${2:?usage: package_install_test.sh DEBS_DIR SOURCE_DIR}
work=$(mktemp -d /tmp/wp-package.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

version=$(sed -n 's/^project(wipeproof VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
arch=$(dpkg --print-architecture)
declare -A files=(
  [agent]="./usr/bin/wipeproof-prover ./usr/lib/systemd/system/wipeproof-agent.service
           ./usr/share/doc/wipeproof-agent/examples/agent.env ./usr/share/doc/wipeproof-agent/deploy.md
           ./usr/share/doc/wipeproof-agent/operations.md"
  [challenger]="./usr/bin/wipeproof-challenger ./usr/lib/systemd/system/wipeproof-challenger.service
                ./usr/share/doc/wipeproof-challenger/examples/challenger.env
                ./usr/share/doc/wipeproof-challenger/examples/inventory.json ./usr/share/doc/wipeproof-challenger/deploy.md
                ./usr/share/doc/wipeproof-challenger/examples/wipeproof-alerts.yml")
root="$work/root"
mkdir -p "$root"
for part in agent challenger; do
  deb="$debs/wipeproof-${part}_${version}_${arch}.deb"
  [[ -f "$deb" ]] || fail "no $deb (the folder holds: $(ls "$debs"))"
  info=$(dpkg-deb -f "$deb" Package Depends)
  grep -qx "Package: wipeproof-$part" <<<"$info" || fail "$deb: $info"
  # shlibdeps found the shared libraries the binary links (Cap'n Proto, libsodium, glog, ...).
  for lib in libcapnp libsodium libgoogle-glog libc6 passwd; do
    grep -q "^Depends:.*$lib" <<<"$info" || fail "$deb does not depend on $lib: $info"
  done
  dpkg-deb -I "$deb" postinst | grep -q "useradd --system" || fail "$deb: postinst does not create the wipeproof user"
  listing=$(dpkg-deb -c "$deb" | awk '{print $6}')
  for f in ${files[$part]}; do grep -qxF "$f" <<<"$listing" || fail "$deb lacks $f"; done
  dpkg-deb -x "$deb" "$root"
  echo "wipeproof-$part: $(du -k "$deb" | cut -f1) KiB, $(wc -l <<<"$listing") entries; $(grep ^Depends <<<"$info")"
done

prover="$root/usr/bin/wipeproof-prover"
challenger="$root/usr/bin/wipeproof-challenger"
"$prover" --help >"$work/help.txt" 2>&1 || true
grep -q "serve" "$work/help.txt" || fail "installed wipeproof-prover --help: $(head -5 "$work/help.txt")"
"$challenger" --help >"$work/help.txt" 2>&1 || true
grep -q "serve" "$work/help.txt" || fail "installed wipeproof-challenger --help: $(head -5 "$work/help.txt")"
# The installed units, pointed at the installed binaries, verify.
for u in wipeproof-agent wipeproof-challenger; do
  sed "s|/usr/bin/|$root/usr/bin/|" "$root/usr/lib/systemd/system/$u.service" >"$work/$u.service"
done
out=$(systemd-analyze verify "$work"/wipeproof-*.service 2>&1) || fail "systemd-analyze verify: $out"

"$src/tests/system/e2e_loopback_test.sh" "$prover" "$challenger" || fail "the installed binaries' loopback session"
echo "PASS"
