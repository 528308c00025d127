// testutil.js: what the GJS tests share: assertions, a temporary
// directory, and a TAP runner
//
// SPDX-License-Identifier: LGPL-2.1-or-later

/* exported assert, assertEqual, assertThrows, assertQStoreError, show,
   withTmpDir, test, run */

imports.gi.versions.GLib = '2.0';
imports.gi.versions.Gio = '2.0';
imports.gi.versions.QStore = '1.0';
const {GLib, Gio, QStore} = imports.gi;
const System = imports.system;

// JSON that shows BigInts, Uint8Arrays and -0 for what they are.
function show(value) {
    return JSON.stringify(value, (key, v) => {
        if (typeof v === 'bigint')
            return `${v}n`;
        if (v instanceof Uint8Array)
            return {bytes: Array.from(v)};
        if (Object.is(v, -0))
            return '-0';
        return v;
    });
}

function assert(condition, message) {
    if (!condition)
        throw new Error(`assertion failed: ${message}`);
}

function assertEqual(actual, expected, message = '') {
    const a = show(actual), e = show(expected);
    if (a !== e)
        throw new Error(`${message} expected ${e}, got ${a}`);
}

// @func must throw; @check looks at what it threw.
function assertThrows(func, check, message) {
    try {
        func();
    } catch (e) {
        check(e);
        return;
    }
    throw new Error(`${message}: nothing was thrown`);
}

// @func must fail with the QStore.Error @code and a message that says
// @part; returns the error.
function assertQStoreError(code, func, part = '') {
    let error = null;
    assertThrows(func, e => {
        if (!(e instanceof GLib.Error))
            throw e;
        assertEqual(GLib.quark_to_string(e.domain), 'qstore-error-quark', e.message);
        assertEqual(e.code, code, e.message);
        assert(e.matches(QStore.Error, code), `matches(QStore.Error, ${code})`);
        assert(e.message.includes(part), `“${e.message}” says “${part}”`);
        error = e;
    }, `expected QStore.Error ${code}`);
    return error;
}

function removeTree(file) {
    const children = file.enumerate_children('standard::name,standard::type',
        Gio.FileQueryInfoFlags.NOFOLLOW_SYMLINKS, null);
    let info;
    while ((info = children.next_file(null))) {
        const child = file.get_child(info.get_name());
        if (info.get_file_type() === Gio.FileType.DIRECTORY)
            removeTree(child);
        else
            child.delete(null);
    }
    file.delete(null);
}

// Calls @func with a new temporary directory, removed afterwards.
function withTmpDir(func) {
    const tmpdir = GLib.dir_make_tmp('qstore-gi-XXXXXX');
    try {
        return func(tmpdir);
    } finally {
        removeTree(Gio.File.new_for_path(tmpdir));
    }
}

const tests = [];

function test(name, func) {
    tests.push([name, func]);
}

// Runs every test, prints TAP and exits.
function run() {
    let failed = 0;
    print(`1..${tests.length}`);
    tests.forEach(([name, func], i) => {
        try {
            func();
            print(`ok ${i + 1} - ${name}`);
        } catch (e) {
            failed++;
            print(`not ok ${i + 1} - ${name}`);
            for (const line of `${e}\n${e.stack ?? ''}`.trim().split('\n'))
                print(`# ${line}`);
        }
    });
    System.exit(failed ? 1 : 0);
}
