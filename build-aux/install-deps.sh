#!/bin/sh
# Installs the Debian 12 packages qstore needs to build, test and run.
# Idempotent: packages already present are skipped, and apt is not touched at
# all when nothing is missing.
set -eu

PACKAGES="
  build-essential meson ninja-build pkg-config gettext
  libglib2.0-dev libglib2.0-bin libjson-glib-dev libsqlite3-dev sqlite3
  liblmdb-dev lmdb-utils
  libpq-dev postgresql
  libgtk-4-dev libadwaita-1-dev
  gobject-introspection libgirepository1.0-dev gir1.2-glib-2.0
  python3 python3-gi gjs gi-docgen
  dbus dbus-x11 xvfb xauth
  desktop-file-utils appstream locales
"

missing=""
for p in $PACKAGES; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [ "$status" = installed ] || missing="$missing $p"
done

if [ -z "$missing" ]; then
  echo "install-deps: all packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" != 0 ]; then
  SUDO=sudo
fi

echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
# shellcheck disable=SC2086
$SUDO apt-get install -y -q --no-install-recommends $missing
