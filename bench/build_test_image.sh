#!/usr/bin/env bash
# Builds the local CPU test image for the docker executor, offline from Docker Hub: a Debian
# bookworm minbase root (debootstrap, Debian's Python 3.11) with the arena lock's CPU torch,
# Triton and their dependencies installed from wheels, imported into podman (or docker) as
#   localhost/arena-cpu-test:<TAG>
# tests/python/arena/executors/container_test.py runs real containers from it (skipped without it).
#
# Inputs are pinned: the Debian suite, and every wheel's version read from
# third_party/python/arena.lock (torch from the local wheel folder pip's find-links names, or
# ARENA_WHEELS_DIR; the others from the package index pip is configured with). The root is packed
# as a sorted tar with zero mtimes and owners, so the layer depends on the files only. Debian's
# packages are whatever bookworm holds on the day (no snapshot mirror is reachable from here), and
# debootstrap writes dates: each build has its own digest, which the tests read from the engine.
#
# Run as root on a Debian 12 machine: bash bench/build_test_image.sh
#   ENGINE=docker       import into docker instead of podman
#   WORK=/var/tmp/x     where the root and the wheels are built (default /var/tmp/arena-test-image)
#   MIRROR=http://...   the Debian mirror (default http://deb.debian.org/debian)
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
engine="${ENGINE:-podman}"
work="${WORK:-/var/tmp/arena-test-image}"
mirror="${MIRROR:-http://deb.debian.org/debian}"
image="localhost/arena-cpu-test"
tag="bookworm-py311-torch2.13.0-triton3.7.1"  # container_test.py looks for this tag
packages=(torch triton numpy filelock fsspec jinja2 markupsafe networkx sympy mpmath setuptools typing-extensions)

die() { echo "build_test_image: $*" >&2; exit 1; }
[[ "$(id -u)" == 0 ]] || die "run as root (debootstrap and the engine's root storage need it)"

missing=()
command -v debootstrap >/dev/null || missing+=(debootstrap)
if [[ "${engine}" == podman ]]; then
  command -v podman >/dev/null || missing+=(podman)
  command -v runc >/dev/null || missing+=(runc)
else
  command -v "${engine}" >/dev/null || die "${engine} is not installed"
fi
if ((${#missing[@]})); then
  apt-get install -y "${missing[@]}"
fi

# crun (podman's default runtime on Debian 12) refuses a hybrid cgroup layout ("cgroups in hybrid
# mode not supported, drop all controllers from cgroupv2"): machines of our kind mount cgroup v1
# with hugetlb on the v2 hierarchy. runc runs there; make it podman's runtime with a drop-in.
# (Read, not tested with -s: a cgroup file's size is 0 whatever it holds.)
if [[ "${engine}" == podman ]] && [[ -n "$(cat /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null)" ]]; then
  mkdir -p /etc/containers/containers.conf.d
  printf '# arena: crun refuses this hybrid cgroup layout; runc runs it.\n[engine]\nruntime = "runc"\n' \
    > /etc/containers/containers.conf.d/50-arena-runc.conf
fi

# The wheel versions the arena lock pins (torch's runtime closure, Triton, numpy).
mapfile -t pins < <(python3 - "${repo}/third_party/python/arena.lock" "${packages[@]}" <<'EOF'
import json, sys
text = "\n".join(line for line in open(sys.argv[1]) if not line.startswith("//"))
wanted = sys.argv[2:]
found = {req["project_name"]: req["version"]
         for resolve in json.loads(text)["locked_resolves"] for req in resolve["locked_requirements"]}
missing = [name for name in wanted if name not in found]
if missing:
    sys.exit(f"not in the arena lock: {', '.join(missing)}")
for name in wanted:
    print(f"{name}=={found[name]}")
EOF
)

rm -rf "${work}"
mkdir -p "${work}/wheels"
debootstrap --variant=minbase --include=python3 bookworm "${work}/rootfs" "${mirror}"

find_links=()
[[ -n "${ARENA_WHEELS_DIR:-}" ]] && find_links=(--find-links "${ARENA_WHEELS_DIR}")
python3 -m pip download --only-binary=:all: --no-deps --python-version 3.11 --platform manylinux_2_28_x86_64 \
  "${find_links[@]}" -d "${work}/wheels" "${pins[@]}"
# Straight into Debian's site folder for /usr/local: no pip, no venv inside the image.
python3 -m pip install --no-index --no-deps --no-compile --ignore-installed \
  --target "${work}/rootfs/usr/local/lib/python3.11/dist-packages" "${work}"/wheels/*.whl
rm -rf "${work}"/rootfs/var/cache/apt/*.bin "${work}"/rootfs/var/lib/apt/lists/* "${work}"/rootfs/var/log/*

chroot "${work}/rootfs" env TRITON_INTERPRET=1 python3 -c \
  'import torch, triton, numpy; print("in the root:", torch.__version__, triton.__version__, numpy.__version__)'

tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "${work}/rootfs" -c . \
  | "${engine}" import \
      --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change 'CMD ["/bin/sh"]' - "${image}:${tag}"
echo "built ${image}:${tag}:"
"${engine}" image inspect --format '{{.Id}} {{.Digest}}' "${image}:${tag}"
