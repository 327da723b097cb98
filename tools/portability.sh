#!/usr/bin/env bash
# Runs jaxlite's test suite on platforms that CI does not cover, each in a Debian 13
# (trixie) chroot built with debootstrap:
#
#   i386   32-bit x86: CPython 3.13 with Debian's NumPy and SciPy (PyPI has no 32-bit
#          Linux wheels of them); ml_dtypes is built from its source release. JAX has
#          no 32-bit build, so the tests that compare with it skip.
#   pypy   PyPy (Debian's pypy3, 7.3.19, Python 3.11) on amd64, with NumPy's PyPy wheel
#          and ml_dtypes built from source. SciPy and JAX have no PyPy builds, so the
#          tests that need them skip.
#   amd64  CPython 3.13 on glibc 2.41 (whose float functions tanf, atanf, cbrtf, ...
#          are not 2.36's), with everything in constraints.txt, JAX included.
#
# Usage: tools/portability.sh PLATFORM [PYTEST ARGUMENTS...]
#   e.g. tools/portability.sh i386 tests/test_core.py -x
# With no pytest arguments the whole suite runs (`-q`).
#
# Needs root (debootstrap, chroot, mounting /proc), Debian's package mirror and PyPI.
# The chroots and virtual environments are built once and kept under
# $JAXLITE_PORTABILITY_DIR (default /tmp/jaxlite-portability; about 1.5 GB for all
# three); the first run of a platform takes 5 to 15 minutes, later runs copy the
# working tree (tracked and untracked, not ignored, files) in and run pytest.
# Delete the directory (after `umount` of any <chroot>/proc left mounted) to rebuild.
set -euo pipefail

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit 2
}

[[ $# -ge 1 ]] || usage
platform=$1
shift
case $platform in
    i386) arch=i386 ;;
    pypy | amd64) arch=amd64 ;;
    -h | --help) usage ;;
    *) echo "portability.sh: unknown platform '$platform' (i386, pypy or amd64)" >&2; exit 2 ;;
esac

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${JAXLITE_PORTABILITY_DIR:-/tmp/jaxlite-portability}
suite=${JAXLITE_PORTABILITY_SUITE:-trixie}
mirror=${JAXLITE_PORTABILITY_MIRROR:-http://deb.debian.org/debian}
root=$cache/$suite-$arch
venv=/opt/venv-$platform

log() { echo "portability.sh [$platform]: $*" >&2; }

if [[ $(id -u) -ne 0 ]]; then
    echo "portability.sh: needs root (debootstrap, chroot, mount)" >&2
    exit 1
fi
mkdir -p "$cache"

# One run per chroot at a time (the mounts and the copied tree are shared).
exec 9>"$root.lock"
flock 9

in_root() {
    chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        DEBIAN_FRONTEND=noninteractive PIP_DISABLE_PIP_VERSION_CHECK=1 \
        "${pip_cert[@]}" "$@"
}

# 1. The Debian base system.
if [[ ! -e $root/.jaxlite-base ]]; then
    if ! command -v debootstrap >/dev/null; then
        log "installing debootstrap"
        apt-get update -qq && apt-get install -y -qq debootstrap
    fi
    log "debootstrap $suite $arch into $root (a few minutes)"
    rm -rf "$root.tmp"
    debootstrap --arch="$arch" --variant=minbase "$suite" "$root.tmp" "$mirror" \
        >"$cache/debootstrap-$arch.log" 2>&1 ||
        { tail -n 20 "$cache/debootstrap-$arch.log" >&2; exit 1; }
    rm -rf "$root"
    mv "$root.tmp" "$root"
    touch "$root/.jaxlite-base"
fi

cp /etc/resolv.conf "$root/etc/resolv.conf"
# pip in the chroot trusts what pip here trusts (a proxy's certificate authority).
host_ca=${PIP_CERT:-$(pip config get global.cert 2>/dev/null || true)}
[[ -n $host_ca ]] || host_ca=/etc/ssl/certs/ca-certificates.crt
pip_cert=()
if [[ -f $host_ca ]]; then
    cp "$host_ca" "$root/etc/jaxlite-host-ca.crt"
    pip_cert=(PIP_CERT=/etc/jaxlite-host-ca.crt)
fi
mountpoint -q "$root/proc" || mount -t proc proc "$root/proc"
trap 'umount "$root/proc" 2>/dev/null || true' EXIT

# 2. The platform's Python environment.
# pip's constraints without the packages that come from Debian or that do not exist
# for the platform (a constraint would make pip build NumPy or SciPy from source).
constraints_without() {
    grep -vE "^($1)==" "$repo/constraints.txt" >"$root/tmp/constraints.txt"
}
if [[ ! -e $root/.jaxlite-$platform ]]; then
    log "installing Python and the test dependencies (several minutes)"
    common=(ca-certificates g++)
    case $platform in
        i386)
            in_root apt-get update -qq
            in_root apt-get install -y -qq --no-install-recommends "${common[@]}" \
                python3 python3-venv python3-pip python3-dev python3-setuptools \
                python3-numpy python3-scipy cmake ninja-build
            in_root python3 -m venv --system-site-packages "$venv"
            constraints_without "numpy|scipy|jax|jaxlib|ruff"
            # ml_dtypes has no 32-bit wheel: build it against Debian's NumPy (an
            # isolated build would build NumPy from source first).
            in_root "$venv/bin/pip" install -q -c /tmp/constraints.txt \
                scikit-build-core pytest hypothesis
            in_root "$venv/bin/pip" install -q -c /tmp/constraints.txt \
                --no-build-isolation ml_dtypes
            ;;
        pypy)
            in_root apt-get update -qq
            in_root apt-get install -y -qq --no-install-recommends "${common[@]}" \
                pypy3 pypy3-dev pypy3-venv
            in_root pypy3 -m venv "$venv"
            constraints_without "scipy|jax|jaxlib|ruff|hypothesis"
            # Hypothesis's PyPy wheels since 6.156 carry a native module linked
            # against a newer PyPy (undefined symbol PyPyModule_FromDefAndSpec2 on
            # 7.3.19): take the last pure-Python release.
            echo "hypothesis==6.155.7" >>"$root/tmp/constraints.txt"
            # NumPy has PyPy wheels; ml_dtypes is built from source.
            in_root "$venv/bin/pip" install -q -c /tmp/constraints.txt \
                numpy ml_dtypes pytest hypothesis
            ;;
        amd64)
            in_root apt-get update -qq
            in_root apt-get install -y -qq --no-install-recommends "${common[@]}" \
                python3 python3-venv python3-pip
            in_root python3 -m venv "$venv"
            constraints_without "ruff"
            in_root "$venv/bin/pip" install -q -c /tmp/constraints.txt \
                numpy scipy ml_dtypes opt_einsum jax pytest hypothesis
            ;;
    esac
    touch "$root/.jaxlite-$platform"
fi

# 3. The working tree, copied in fresh, installed editable (the path is the same each
# time, so the install is done once).
log "copying $repo into $root/work/jaxlite"
rm -rf "$root/work/jaxlite"
mkdir -p "$root/work/jaxlite"
(cd "$repo" && git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do [[ -e $f ]] && printf '%s\0' "$f"; done |
    tar --null -T - -cf -) | tar -xf - -C "$root/work/jaxlite"
if [[ ! -e $root/.jaxlite-$platform-editable ]]; then
    in_root "$venv/bin/pip" install -q --no-deps -e /work/jaxlite
    touch "$root/.jaxlite-$platform-editable"
fi

# 4. The tests.
[[ $# -gt 0 ]] || set -- -q
log "$(in_root "$venv/bin/python" -c 'import platform, struct, numpy
bits = 8 * struct.calcsize("P")
print(platform.python_implementation(), platform.python_version(), "%d-bit," % bits,
      "glibc", platform.libc_ver()[1], "and numpy", numpy.__version__)')"
in_root /usr/bin/env -C /work/jaxlite "$venv/bin/python" -m pytest -p no:cacheprovider "$@"
