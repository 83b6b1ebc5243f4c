# Sourced by the GPU-machine scripts: where bwrap is not installed, unpack the bubblewrap .deb and
# its libraries carried in .debs/ (`apt-get download bubblewrap libcap2 libselinux1 libpcre2-8-0`)
# and put a wrapper first on PATH that gives only bwrap those libraries.
if ! command -v bwrap >/dev/null 2>&1 && ls .debs/bubblewrap_*.deb >/dev/null 2>&1; then
  _bw="$(mktemp -d)"
  for _deb in .debs/*.deb; do dpkg -x "$_deb" "$_bw/root"; done
  mkdir -p "$_bw/bin"
  printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s "$@"\n' \
    "$_bw/root/usr/lib/x86_64-linux-gnu:$_bw/root/lib/x86_64-linux-gnu" "$_bw/root/usr/bin/bwrap" >"$_bw/bin/bwrap"
  chmod +x "$_bw/bin/bwrap"
  export PATH="$_bw/bin:$PATH"
fi
