#!/bin/sh
# post-install.sh: after a real `meson install` (not a staged DESTDIR one)
# as root, refresh the dynamic linker's cache so the new libqstore is found
# without LD_LIBRARY_PATH.
set -eu
if [ "${MESON_INSTALL_DESTDIR_PREFIX:-}" = "${MESON_INSTALL_PREFIX:-}" ] &&
   [ "$(id -u)" = 0 ] && command -v ldconfig >/dev/null 2>&1; then
  ldconfig
fi
