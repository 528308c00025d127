#!/usr/bin/python3
# test-devenv.py: running qstore from the build tree, as a developer does
#
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Usage: test-devenv.py MESON BUILDDIR SOURCEDIR PLUGIN-INSTALL-DIR

`meson devenv -C BUILDDIR` must give an environment where the qstore
command, qstore-inspector's settings and translations, Python (with the
overrides) and GJS (with the helper) all work on the build tree; and the
uninstalled qstore command must find its plugins with no variable set,
while "no providers found" exits 1. Every command runs from a temporary
directory with none of the variables the test harness sets, as in a fresh
shell."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

MESON, BUILDDIR, SOURCEDIR, PLUGIN_INSTALL_DIR, PLUGIN_NAMES = sys.argv[1:6]
del sys.argv[1:6]
# The providers this build makes, as `qstore providers` sorts them.
PLUGINS = sorted(PLUGIN_NAMES.split(","))

# What the test harness sets and a developer's shell does not have.
HARNESS_VARIABLES = ("QSTORE_PLUGIN_DIR", "GI_TYPELIB_PATH", "LD_LIBRARY_PATH", "PYTHONPATH",
                     "GJS_PATH", "GSETTINGS_SCHEMA_DIR", "QSTORE_LOCALEDIR", "G_TEST_SRCDIR",
                     "G_TEST_BUILDDIR", "MESON_DEVENV")

PYTHON_CHECK = """
import gi
gi.require_version("QStore", "1.0")
from gi.repository import QStore
with QStore.Database.open("memory:") as db:
    db.execute("CREATE TABLE t (k PRIMARY KEY, v)")
    db.execute("INSERT INTO t VALUES (:k, :v)", {"k": "key", "v": b""})
    print(list(db.query("SELECT k, typeof(v) FROM t")))
    try:
        db.execute("SELEC")
    except QStore.SyntaxError as e:
        print(e.code.value_nick)
import gi.overrides.QStore as overrides
print(overrides.__file__)
"""

GJS_CHECK = """
const {QStore} = imports.qstore;
const db = QStore.Database.open('memory:');
db.execute('CREATE TABLE t (k PRIMARY KEY, v)');
db.execute('INSERT INTO t VALUES (:k, :v)', {k: 'key', v: new Uint8Array()});
print(JSON.stringify(db.query('SELECT k, typeof(v) FROM t').toArray()));
db.close();
"""

SETTINGS_CHECK = """
import gettext, os
import gi
gi.require_version("Gio", "2.0")
from gi.repository import Gio
source = Gio.SettingsSchemaSource.get_default()
print(source.lookup("org.qstore.Inspector", True) is not None)
print(gettext.find("qstore", os.environ["QSTORE_LOCALEDIR"], ["de"]))
"""


def clean_environment():
    env = {k: v for k, v in os.environ.items() if k not in HARNESS_VARIABLES}
    env["LC_ALL"] = "C.UTF-8"
    return env


class DevenvTests(unittest.TestCase):
    def setUp(self):
        self.tmpdir = tempfile.TemporaryDirectory(prefix="qstore-devenv-")
        self.addCleanup(self.tmpdir.cleanup)

    def run_in(self, command, devenv=True, env=None, check=True):
        if devenv:
            command = [MESON, "devenv", "-C", BUILDDIR] + command
        result = subprocess.run(command, cwd=self.tmpdir.name, env=env or clean_environment(),
                                capture_output=True, text=True, timeout=60)
        if check and result.returncode != 0:
            self.fail("%s exited with %d:\n%s%s" % (command, result.returncode, result.stdout,
                                                    result.stderr))
        return result

    def test_qstore_providers(self):
        out = self.run_in(["qstore", "providers"]).stdout
        self.assertEqual([line.split()[0] for line in out.splitlines()],
                         PLUGINS)

    def test_qstore_sql(self):
        store = "lmdb:" + os.path.join(self.tmpdir.name, "store")
        self.run_in(["qstore", "--store", store, "sql", "CREATE TABLE t (a PRIMARY KEY)",
                     "INSERT INTO t VALUES (1), (2)"])
        out = self.run_in(["qstore", "--store", store, "sql", "--json", "SELECT a FROM t"]).stdout
        self.assertEqual(out.split(), ["[1]", "[2]"])

    def test_python_hello(self):
        with open(os.path.join(SOURCEDIR, "examples", "hello.expected")) as f:
            expected = f.read()
        hello = os.path.join(SOURCEDIR, "examples", "hello.py")
        self.assertEqual(self.run_in(["/usr/bin/python3", hello]).stdout, expected)
        self.assertEqual(self.run_in(["/usr/bin/python3", hello,
                                      os.path.join(self.tmpdir.name, "fruit")]).stdout, expected)

    def test_python_overrides(self):
        lines = self.run_in(["/usr/bin/python3", "-c", PYTHON_CHECK]).stdout.splitlines()
        self.assertEqual(lines[0], "[('key', 'blob')]")
        self.assertEqual(lines[1], "syntax")
        self.assertEqual(lines[-1], os.path.join(SOURCEDIR, "bindings", "python", "gi",
                                                 "overrides", "QStore.py"))

    def test_gjs(self):
        with open(os.path.join(SOURCEDIR, "examples", "hello.expected")) as f:
            expected = f.read()
        hello = os.path.join(SOURCEDIR, "examples", "hello.js")
        self.assertEqual(self.run_in(["gjs", hello]).stdout, expected)
        self.assertEqual(self.run_in(["gjs", "-c", GJS_CHECK]).stdout, '[["key","blob"]]\n')

    def test_inspector_settings_and_translations(self):
        self.assertTrue(self.run_in(["sh", "-c", "command -v qstore-inspector"]).stdout.startswith(
            os.path.realpath(BUILDDIR)))
        lines = self.run_in(["/usr/bin/python3", "-c", SETTINGS_CHECK]).stdout.splitlines()
        self.assertEqual(lines[0], "True", "the inspector's schema is found")
        self.assertTrue(lines[1].endswith("de/LC_MESSAGES/qstore.mo"), lines)

    def test_inspector_opens_a_store(self):
        if not all(shutil.which(p) for p in ("xvfb-run", "dbus-run-session", "timeout")):
            self.skipTest("needs xvfb-run and dbus-run-session")
        store = os.path.join(self.tmpdir.name, "demo")
        self.run_in(["qstore", "demo", store])
        env = clean_environment()
        # The timeout kills xvfb-run before it removes its directory: that
        # one goes with ours.
        env.update(GSK_RENDERER="cairo", GDK_BACKEND="x11", NO_AT_BRIDGE="1",
                   TMPDIR=self.tmpdir.name)
        # Still running after a few seconds: it opened the store and its window.
        result = self.run_in(["timeout", "4", "dbus-run-session", "--", "xvfb-run", "-a",
                              "qstore-inspector", "lmdb:" + store], env=env, check=False)
        self.assertEqual(result.returncode, 124, result.stdout + result.stderr)
        self.assertNotIn("No provider", result.stderr)
        self.assertNotIn("schema", result.stderr.lower())

    def test_uninstalled_qstore_finds_its_plugins(self):
        qstore = os.path.join(BUILDDIR, "tools", "qstore")
        out = self.run_in([qstore, "providers"], devenv=False).stdout
        self.assertEqual([line.split()[0] for line in out.splitlines()],
                         PLUGINS)

    def test_no_providers_exits_1(self):
        if os.path.isdir(PLUGIN_INSTALL_DIR) and os.listdir(PLUGIN_INSTALL_DIR):
            self.skipTest("plugins are installed in %s" % PLUGIN_INSTALL_DIR)
        env = clean_environment()
        env["QSTORE_PLUGIN_DIR"] = self.tmpdir.name   # nothing there
        result = self.run_in([os.path.join(BUILDDIR, "tools", "qstore"), "providers"],
                             devenv=False, env=env, check=False)
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertEqual(result.stdout, "")
        self.assertIn("qstore: no providers found", result.stderr)
        self.assertIn(PLUGIN_INSTALL_DIR, result.stderr)


if __name__ == "__main__":
    unittest.main()
