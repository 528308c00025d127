# serverutil.py: start `qstore serve` on a temporary store and talk to it
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

import gi

gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib  # noqa: E402

QSTORE = os.environ["QSTORE_TOOL"]
IFACE = "org.qstore.Server1"
PATH = "/org/qstore/Server"


def run_tool(store, *args, check=True):
    return subprocess.run([QSTORE, "--store", store, *args], capture_output=True,
                          text=True, check=check, timeout=60)


def new_store(schema=("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)",)):
    directory = tempfile.mkdtemp(prefix="qstore-dbus-")
    store = "lmdb:" + os.path.join(directory, "store")
    for statement in schema:
        run_tool(store, "sql", statement)
    return directory, store


def new_connection():
    """A connection of its own: its own unique name, as another program."""
    address = Gio.dbus_address_get_for_bus_sync(Gio.BusType.SESSION, None)
    return Gio.DBusConnection.new_for_address_sync(
        address,
        Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT
        | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)


def wait_until(predicate, timeout=10.0):
    context = GLib.MainContext.default()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        while context.pending():
            context.iteration(False)
        if predicate():
            return True
        time.sleep(0.01)
    while context.pending():
        context.iteration(False)
    return predicate()


def spin(seconds):
    wait_until(lambda: False, seconds)


def has_owner(connection, name):
    reply = connection.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus",
                                 "org.freedesktop.DBus", "NameHasOwner",
                                 GLib.Variant("(s)", (name,)), None,
                                 Gio.DBusCallFlags.NONE, -1, None)
    return reply.unpack()[0]


class Server:
    def __init__(self, store, *args, server_id="t"):
        self.store = store
        self.name = "org.qstore.Server." + server_id
        self.process = subprocess.Popen(
            [QSTORE, "--store", store, "serve", "--id", server_id, *args],
            stderr=subprocess.PIPE, text=True)
        bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
        if not wait_until(lambda: has_owner(bus, self.name) or self.process.poll() is not None):
            raise AssertionError("the server never took its name")
        if self.process.poll() is not None:
            raise AssertionError("the server stopped: " + self.process.stderr.read())

    def call(self, method, args=None, reply_type=None, connection=None):
        connection = connection or Gio.bus_get_sync(Gio.BusType.SESSION, None)
        reply = connection.call_sync(self.name, PATH, IFACE, method, args,
                                     GLib.VariantType(reply_type) if reply_type else None,
                                     Gio.DBusCallFlags.NONE, 10000, None)
        return reply.unpack() if reply is not None else None

    def execute(self, sql, connection=None):
        return self.call("Execute", GLib.Variant("(s)", (sql,)), "(tt)", connection)

    def prop(self, name):
        bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
        reply = bus.call_sync(self.name, PATH, "org.freedesktop.DBus.Properties", "Get",
                              GLib.Variant("(ss)", (IFACE, name)), None,
                              Gio.DBusCallFlags.NONE, 10000, None)
        return reply.unpack()[0]

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        _, err = self.process.communicate(timeout=30)
        self.log = err
        return self.process.returncode


class Recorder:
    """Every signal of the interface a connection hears, in order."""

    def __init__(self, connection, sender):
        self.signals = []
        self.connection = connection
        self.id = connection.signal_subscribe(sender, IFACE, None, PATH, None,
                                              Gio.DBusSignalFlags.NONE, self._on_signal)

    def _on_signal(self, connection, sender, path, iface, member, parameters):
        self.signals.append((member, parameters.unpack()))

    def named(self, member):
        return [args for name, args in self.signals if name == member]

    def close(self):
        self.connection.signal_unsubscribe(self.id)


def remove(directory):
    shutil.rmtree(directory, ignore_errors=True)


__all__ = ["Gio", "GLib", "json", "QSTORE", "IFACE", "PATH", "Server", "Recorder",
           "new_store", "new_connection", "run_tool", "wait_until", "spin", "remove"]
