#!/bin/sh
# Runs one GUI test on its own X server and session bus, as CI has no
# display: xvfb-run starts Xvfb, dbus-run-session the bus.
set -eu
for tool in xvfb-run dbus-run-session; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "1..0 # SKIP $tool is not installed (build-aux/install-deps.sh installs it)"
    exit 0
  fi
done
exec dbus-run-session -- xvfb-run -a -s "-screen 0 1600x1000x24 -nolisten tcp" "$@"
