#!/bin/sh
# `make run`: opens qstore-inspector on a demo store, creating the store
# the first time. Without a display it prints what the inspector would
# show: the store's catalog and its stale-view report.
set -eu
builddir=${1:-_build}
qstore="$builddir/tools/qstore"
inspector="$builddir/inspector/qstore-inspector"
demo="$builddir/demo-store"

# Run from the build tree: plugins, the settings schema and translations
# from there.
QSTORE_PLUGIN_DIR="$builddir/plugins/memory:$builddir/plugins/lmdb:$builddir/plugins/sqlite"
GSETTINGS_SCHEMA_DIR="$builddir/data"
QSTORE_LOCALEDIR="$builddir/po"
QSTORE_LIB_LOCALEDIR="$builddir/libqstore/po"
export QSTORE_PLUGIN_DIR GSETTINGS_SCHEMA_DIR QSTORE_LOCALEDIR QSTORE_LIB_LOCALEDIR

if [ ! -f "$demo/data.mdb" ]; then
  rm -rf "$demo"
  "$qstore" demo "$demo"
fi
store="lmdb:$(cd "$demo" && pwd)"

if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  echo "No display (neither DISPLAY nor WAYLAND_DISPLAY is set), so qstore-inspector"
  echo "cannot open a window. This is what it would show for $store:"
  echo
  echo "== qstore catalog"
  "$qstore" --store "$store" catalog
  echo
  echo "== qstore stale"
  "$qstore" --store "$store" stale
  exit 0
fi

if [ ! -x "$inspector" ]; then
  echo "qstore-inspector was not built: it needs gtk4 (>= 4.8) and libadwaita-1 (>= 1.2)." >&2
  echo "Run build-aux/install-deps.sh, then reconfigure: meson setup --reconfigure $builddir" >&2
  exit 1
fi

echo "Opening $store in qstore-inspector"
exec "$inspector" "$store"
