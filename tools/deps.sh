#!/bin/sh
# Install missing Debian packages. Arguments: package:path-that-proves-it-is-installed ...
# Says what it does; uses sudo only when not root.
set -e
scan() { # sets $missing: the packages whose proof is absent
    missing=""
    for spec in "$@"; do
        pkg=${spec%%:*}; probe=${spec#*:}
        [ -e "$probe" ] || missing="$missing $pkg"
    done
}
scan "$@"
[ -z "$missing" ] && exit 0
# Under make -j two of these may run at once and apt-get refuses a second caller: take turns,
# then look again (the other may have installed them).
if command -v flock >/dev/null 2>&1; then
    exec 9>"${TMPDIR:-/tmp}/dqsgd-deps.lock" && flock 9
    scan "$@"
    [ -z "$missing" ] && exit 0
fi
echo "deps: installing missing Debian package(s):$missing"
if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "deps: apt-get not found; install$missing by hand" >&2; exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get install -y -q $missing >/dev/null 2>&1 || {
    echo "deps: refreshing the package index (apt-get update)"
    $SUDO apt-get update -q >/dev/null
    $SUDO apt-get install -y -q $missing >/dev/null
}
echo "deps: installed$missing"
