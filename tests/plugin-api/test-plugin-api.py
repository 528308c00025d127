#!/usr/bin/python3
# test-plugin-api.py: qstore refuses plugins of another plugin API version
#
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Usage: test-plugin-api.py QSTORE BAD_PLUGIN_DIR GOOD_PLUGIN_DIR

BAD_PLUGIN_DIR holds libqstore-wrong-api.so (built for the next plugin API
version) and libqstore-no-api.so (declaring none); both abort if their
g_io_module_load() ever runs. GOOD_PLUGIN_DIR holds the memory plugin."""

import os
import re
import subprocess
import sys
import unittest

QSTORE, BAD_DIR, GOOD_DIR = sys.argv[1:4]
del sys.argv[1:4]
WRONG = os.path.join(BAD_DIR, "libqstore-wrong-api.so")
NONE = os.path.join(BAD_DIR, "libqstore-no-api.so")


def api_version():
    header = os.path.join(os.path.dirname(__file__), "..", "..", "libqstore", "kv",
                          "qstore-plugin.h")
    with open(header) as f:
        return int(re.search(r"#define QSTORE_PLUGIN_API_VERSION (\d+)", f.read()).group(1))


class PluginApiTests(unittest.TestCase):
    def run_qstore(self, *args):
        env = dict(os.environ, LC_ALL="C.UTF-8",
                   QSTORE_PLUGIN_DIR=os.pathsep.join([BAD_DIR, GOOD_DIR]))
        return subprocess.run([QSTORE] + list(args), env=env, capture_output=True, text=True,
                              timeout=60)

    def test_listing_refuses_and_goes_on(self):
        self.assertTrue(os.path.exists(WRONG) and os.path.exists(NONE))
        result = self.run_qstore("providers")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertNotIn("mis-versioned plugin loaded", result.stderr)
        self.assertEqual([line.split()[0] for line in result.stdout.splitlines()], ["memory"])
        ours = api_version()
        self.assertIn("Plugin “%s” was not loaded: it was built for qstore plugin API version "
                      "%d, and this qstore has version %d" % (WRONG, ours + 1, ours),
                      result.stderr)
        self.assertIn("Plugin “%s” was not loaded: it declares no qstore plugin API version, "
                      "and this qstore has version %d" % (NONE, ours), result.stderr)

    def test_not_found_names_the_refused(self):
        result = self.run_qstore("--store", "wrong-api:", "kv", "stores")
        self.assertNotEqual(result.returncode, 0)
        self.assertNotIn("mis-versioned plugin loaded", result.stderr)
        self.assertIn("No provider named “wrong-api”", result.stderr)
        self.assertIn("the providers are: memory", result.stderr)
        self.assertRegex(result.stderr, "; Plugin “%s” was not loaded: it was built for qstore "
                         "plugin API version" % re.escape(WRONG))


if __name__ == "__main__":
    unittest.main()
