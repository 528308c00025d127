#!/usr/bin/python3
# test-install.py: `meson install` into a temporary DESTDIR, and its use
#
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Usage: test-install.py MESON BUILDDIR SOURCEDIR NAME=VALUE...

Installs the build into a temporary DESTDIR and checks what landed there:
every file a user needs in its place (the NAME=VALUE pairs give the
configured directories and what was built), nothing private, a schema
that compiles; then builds
examples/hello.c with `pkg-config --cflags --libs qstore-1` against the
installed copy alone and runs it, and runs the installed qstore command,
Python overrides and GJS helper."""

import glob
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

MESON, BUILDDIR, SOURCEDIR = sys.argv[1:4]
LAYOUT = dict(arg.split("=", 1) for arg in sys.argv[4:] if "=" in arg)
# The providers this build makes, as `qstore providers` sorts them.
PLUGINS = sorted(LAYOUT.pop("plugins").split(","))
sys.argv[1:] = [arg for arg in sys.argv[4:] if "=" not in arg]
for _flag in ("gir", "inspector"):
    LAYOUT[_flag] = LAYOUT[_flag] == "true"

HARNESS_VARIABLES = ("QSTORE_PLUGIN_DIR", "GI_TYPELIB_PATH", "LD_LIBRARY_PATH", "PYTHONPATH",
                     "GJS_PATH", "GSETTINGS_SCHEMA_DIR", "QSTORE_LOCALEDIR", "PKG_CONFIG_PATH")


def under(destdir, path):
    return os.path.join(destdir, os.path.relpath(path, "/"))


class InstallTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="qstore-install-")
        cls.destdir = os.path.join(cls.tmp.name, "root")
        result = subprocess.run([MESON, "install", "-C", BUILDDIR, "--no-rebuild", "--quiet",
                                 "--destdir", cls.destdir],
                                capture_output=True, text=True, timeout=300)
        if result.returncode != 0:
            raise AssertionError("meson install failed:\n" + result.stdout + result.stderr)
        cls.files = sorted(os.path.relpath(os.path.join(d, f), cls.destdir)
                           for d, _, names in os.walk(cls.destdir) for f in names)
        cls.prefix = under(cls.destdir, LAYOUT["prefix"])
        cls.libdir = under(cls.destdir, LAYOUT["libdir"])

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def installed(self, path):
        return os.path.relpath(path, "/") in self.files

    def env(self, **extra):
        """The installed copy only: its library, plugins and typelib."""
        env = {k: v for k, v in os.environ.items() if k not in HARNESS_VARIABLES}
        env.update(LC_ALL="C.UTF-8", LD_LIBRARY_PATH=self.libdir,
                   QSTORE_PLUGIN_DIR=os.path.join(self.libdir, "qstore-1", "plugins"))
        env.update(extra)
        return env

    def run_ok(self, command, env, **kwargs):
        result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120,
                                cwd=self.tmp.name, **kwargs)
        if result.returncode != 0:
            self.fail("%s exited with %d:\n%s%s" % (command, result.returncode, result.stdout,
                                                    result.stderr))
        return result.stdout

    def test_file_list(self):
        L = LAYOUT
        expected = [
            L["bindir"] + "/qstore",
            L["bindir"] + "/qstore-conformance",
            L["libdir"] + "/libqstore-1.so",
            L["libdir"] + "/libqstore-1.so.0",
        ] + [
            L["libdir"] + "/qstore-1/plugins/libqstore-%s.so" % name for name in PLUGINS
        ] + [
            L["libdir"] + "/pkgconfig/qstore-1.pc",
            L["includedir"] + "/qstore-1/qstore.h",
            L["includedir"] + "/qstore-1/qstore-enums.h",
            L["includedir"] + "/qstore-1/qstore-database.h",
            L["localedir"] + "/de/LC_MESSAGES/qstore.mo",
            L["localedir"] + "/de/LC_MESSAGES/qstore-1.mo",
        ]
        if L["gir"]:
            expected += [
                L["libdir"] + "/girepository-1.0/QStore-1.0.typelib",
                L["datadir"] + "/gir-1.0/QStore-1.0.gir",
                L["datadir"] + "/gjs-1.0/qstore.js",
            ]
            if L["python_overrides_dir"]:
                expected.append(L["python_overrides_dir"] + "/QStore.py")
        if L["inspector"]:
            expected += [
                L["bindir"] + "/qstore-inspector",
                L["datadir"] + "/applications/org.qstore.Inspector.desktop",
                L["datadir"] + "/metainfo/org.qstore.Inspector.metainfo.xml",
                L["datadir"] + "/glib-2.0/schemas/org.qstore.Inspector.gschema.xml",
                L["datadir"] + "/icons/hicolor/scalable/apps/org.qstore.Inspector.svg",
                L["datadir"] + "/icons/hicolor/symbolic/apps/org.qstore.Inspector-symbolic.svg",
            ]
        missing = [path for path in expected if not self.installed(path)]
        self.assertEqual(missing, [], "installed:\n" + "\n".join(self.files))

        # Nothing private, nothing for tests only.
        headers = [f for f in self.files if f.endswith(".h")]
        self.assertTrue(headers)
        for header in headers:
            self.assertNotIn("private", header)
            self.assertNotIn("fault", header)
        self.assertFalse([f for f in self.files if "/tests/" in f or f.endswith(".a")])

    def test_schema_compiles(self):
        if not LAYOUT["inspector"]:
            self.skipTest("qstore-inspector is not built")
        schemas = under(self.destdir, LAYOUT["datadir"] + "/glib-2.0/schemas")
        self.run_ok(["glib-compile-schemas", "--strict", "--dry-run", schemas], self.env())

    def test_typelib_has_no_test_api(self):
        if not LAYOUT["gir"]:
            self.skipTest("no introspection data")
        with open(under(self.destdir, LAYOUT["datadir"] + "/gir-1.0/QStore-1.0.gir")) as f:
            gir = f.read()
        self.assertIn('c:identifier="qstore_database_execute"', gir)
        self.assertNotIn("qstore_fault", gir)

    def staged_pkgconfig_dir(self):
        """A directory with a qstore-1.pc that describes the staged copy.

        The .pc file names the real prefix, where nothing is installed yet.
        Every other path in it derives from ${prefix}, so a copy whose
        prefix= line points into the DESTDIR describes the staged copy.
        (pkg-config's --define-variable and PKG_CONFIG_SYSROOT_DIR would
        move GLib's paths too, and --define-prefix misreads multiarch
        library directories.)"""
        with open(os.path.join(self.libdir, "pkgconfig", "qstore-1.pc")) as f:
            lines = f.read().splitlines(True)
        self.assertEqual(lines[0], "prefix=%s\n" % LAYOUT["prefix"])
        for line in lines[1:]:
            self.assertNotIn(LAYOUT["prefix"], line, "a path that does not use ${prefix}")
        pkgconfig_dir = os.path.join(self.tmp.name, "pkgconfig")
        os.makedirs(pkgconfig_dir, exist_ok=True)
        with open(os.path.join(pkgconfig_dir, "qstore-1.pc"), "w") as f:
            f.writelines(["prefix=%s\n" % self.prefix] + lines[1:])
        return pkgconfig_dir

    def test_hello_c_against_the_installed_copy(self):
        env = self.env(PKG_CONFIG_PATH=self.staged_pkgconfig_dir())
        flags = self.run_ok(["pkg-config", "--cflags", "--libs", "qstore-1"], env).split()
        self.assertIn("-I" + os.path.join(under(self.destdir, LAYOUT["includedir"]), "qstore-1"),
                      flags)
        self.assertIn("-L" + self.libdir, flags)
        self.assertIn("-lqstore-1", flags)
        for flag in flags:
            self.assertNotIn(os.path.realpath(BUILDDIR), flag)
            self.assertNotIn(os.path.join(SOURCEDIR, "libqstore"), flag)

        hello = os.path.join(self.tmp.name, "hello")
        self.run_ok(["cc", "-o", hello, os.path.join(SOURCEDIR, "examples", "hello.c")] + flags,
                    env)
        with open(os.path.join(SOURCEDIR, "examples", "hello.expected")) as f:
            expected = f.read()
        self.assertEqual(self.run_ok([hello], env), expected)
        self.assertEqual(self.run_ok([hello, os.path.join(self.tmp.name, "fruit")], env), expected)
        # It ran on the installed library.
        linked = self.run_ok(["ldd", hello], env)
        self.assertIn(os.path.join(self.libdir, "libqstore-1.so.0"), linked)

    def test_provider_template_out_of_tree(self):
        """examples/provider-template builds against the staged copy alone,
        installs where qstore-1.pc says plugins go, and qstore loads it."""
        env = self.env(PKG_CONFIG_PATH=self.staged_pkgconfig_dir())
        plugins_dir = os.path.join(self.libdir, "qstore-1", "plugins")
        self.assertEqual(self.run_ok(["pkg-config", "--variable=pluginsdir", "qstore-1"], env),
                         plugins_dir + "\n")
        self.assertEqual(self.run_ok(["pkg-config", "--variable=extensionpoint", "qstore-1"],
                                     env), "qstore-provider\n")

        # A copy of the template, as its author would start from it.
        source = os.path.join(self.tmp.name, "provider-template")
        shutil.copytree(os.path.join(SOURCEDIR, "examples", "provider-template"), source)
        build = os.path.join(self.tmp.name, "provider-template-build")
        self.run_ok([MESON, "setup", "--prefix", self.prefix, build, source], env)
        self.run_ok([MESON, "compile", "-C", build], env)
        plugin = os.path.join(plugins_dir, "libqstore-template.so")
        self.assertFalse(os.path.exists(plugin))
        self.run_ok([MESON, "install", "-C", build, "--no-rebuild", "--quiet"], env)
        try:
            self.assertTrue(os.path.exists(plugin))
            # It links the staged libqstore, exports only the module entry points.
            self.assertIn(os.path.join(self.libdir, "libqstore-1.so.0"),
                          self.run_ok(["ldd", plugin], env))
            exported = self.run_ok(["nm", "-D", "--defined-only", plugin], env).split()
            self.assertIn("g_io_module_load", exported)
            self.assertIn("qstore_plugin_api_version", exported)
            self.assertFalse([name for name in exported if name.startswith("template_")])

            qstore = under(self.destdir, LAYOUT["bindir"] + "/qstore")
            out = self.run_ok([qstore, "providers"], env)
            self.assertIn("template atomic_batch", " ".join(out.split()))
            self.assertEqual(self.run_ok([qstore, "--store", "template:", "kv", "stores"], env),
                             "")
            if LAYOUT["gir"]:
                # Without snapshots, no read transaction: a clear error.
                typelib_dir = os.path.join(self.libdir, "girepository-1.0")
                check = ("import gi; gi.require_version('QStore', '1.0'); "
                         "from gi.repository import GLib, QStore; "
                         "p = QStore.Provider.new_for_uri('template:', QStore.OpenFlags.NONE); "
                         "c = QStore.Coordinator.new(p)\n"
                         "try:\n c.begin_read()\nexcept GLib.Error as e:\n"
                         " print(e.code == QStore.Error.UNSUPPORTED, e.message)")
                out = self.run_ok(["/usr/bin/python3", "-c", check],
                                  self.env(GI_TYPELIB_PATH=typelib_dir))
                self.assertEqual(out, "True The provider has no snapshots: it cannot hold a "
                                 "read transaction\n")

            # It passes the installed conformance runner...
            conformance = under(self.destdir, LAYOUT["bindir"] + "/qstore-conformance")
            out = self.run_ok([conformance, "--uri", "template:", "--tap"], env)
            self.assertIn("ok 2 /providers/template/core/open\n", out)
            self.assertNotIn("not ok", out)
            self.assertNotIn("FAILED", out)

            # ...and a copy whose keys go in the wrong order does not, naming
            # the case and its capability.
            broken = os.path.join(self.tmp.name, "broken-template")
            shutil.copytree(source, broken)
            with open(os.path.join(broken, "template-provider.c")) as f:
                code = f.read()
            right = "return qstore_key_compare (a_key, a_len, b_key, b_len);"
            self.assertIn(right, code)
            with open(os.path.join(broken, "template-provider.c"), "w") as f:
                f.write(code.replace(right, "return qstore_key_compare (b_key, b_len, a_key, a_len);"))
            broken_build = os.path.join(self.tmp.name, "broken-template-build")
            broken_plugins = os.path.join(self.tmp.name, "broken-plugins")
            self.run_ok([MESON, "setup", "--prefix", self.prefix, "-Dpluginsdir=" + broken_plugins,
                         broken_build, broken], env)
            self.run_ok([MESON, "install", "-C", broken_build, "--quiet"], env)
            # The failing case aborts before its teardown: its directory
            # goes with ours.
            result = subprocess.run([conformance, "--uri", "template:", "--plugin-dir",
                                     broken_plugins, "--tap"],
                                    env=dict(env, TMPDIR=self.tmp.name), capture_output=True,
                                    text=True, timeout=120, cwd=self.tmp.name)
            self.assertNotEqual(result.returncode, 0, result.stdout)
            self.assertIn("# FAILED /providers/template/core/bounds: the provider breaks what "
                          "“core” promises", result.stdout)
        finally:
            # The other tests count the staged plugins.
            if os.path.exists(plugin):
                os.unlink(plugin)

    def test_installed_qstore(self):
        qstore = under(self.destdir, LAYOUT["bindir"] + "/qstore")
        out = self.run_ok([qstore, "providers"], self.env())
        self.assertEqual([line.split()[0] for line in out.splitlines()],
                         PLUGINS)
        # Installed, it never falls back to the build tree's plugins.
        if not glob.glob(os.path.join(LAYOUT["libdir"], "qstore-1", "plugins", "*.so")):
            env = self.env()
            del env["QSTORE_PLUGIN_DIR"]
            result = subprocess.run([qstore, "providers"], env=env, capture_output=True,
                                    text=True, timeout=60)
            self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
            self.assertIn("no providers found", result.stderr)

    def test_installed_python_and_gjs(self):
        if not LAYOUT["gir"]:
            self.skipTest("no introspection data")
        typelib_dir = os.path.join(self.libdir, "girepository-1.0")
        check = ("import gi; gi.require_version('QStore', '1.0'); "
                 "from gi.repository import QStore; import gi.overrides.QStore as o; "
                 "db = QStore.Database.open('memory:'); "
                 "print(db.query('SELECT typeof(?)', (b'',))[0][0], o.__file__)")
        if LAYOUT["python_overrides_dir"]:
            # Where /usr/bin/python3 looks under the prefix, if anywhere.
            searched = self.run_ok(["/usr/bin/python3", "-c", "import site; "
                                    "print('\\n'.join(site.getsitepackages()))"],
                                   self.env()).split()
            searched = [p for p in searched if p.startswith(LAYOUT["prefix"].rstrip("/") + "/")]
            real_site_dir = os.path.dirname(os.path.dirname(LAYOUT["python_overrides_dir"]))
            if searched:
                self.assertIn(real_site_dir, searched)
            site_dir = under(self.destdir, real_site_dir)
            out = self.run_ok(["/usr/bin/python3", "-c", check],
                              self.env(GI_TYPELIB_PATH=typelib_dir, PYTHONPATH=site_dir))
            self.assertEqual(out.split(), ["blob", os.path.join(site_dir, "gi", "overrides",
                                                                "QStore.py")])
        if shutil.which("gjs") is None:
            return
        gjs_dir = under(self.destdir, LAYOUT["datadir"] + "/gjs-1.0")
        out = self.run_ok(["gjs", "-c", "const {QStore} = imports.qstore; "
                           "print(QStore.Database.open('memory:').query('SELECT typeof(?)', "
                           "[new Uint8Array()]).get_value(0, 0))"],
                          self.env(GI_TYPELIB_PATH=typelib_dir, GJS_PATH=gjs_dir))
        self.assertEqual(out, "blob\n")


if __name__ == "__main__":
    unittest.main()
