// test-changes.js: following a store another process writes, from JavaScript
//
// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The writer is the qstore command (QSTORE_TOOL), run once per
// transaction; this process follows the store's change log read-only.

imports.gi.versions.GLib = '2.0';
imports.gi.versions.Gio = '2.0';
imports.gi.versions.QStore = '1.0';
const {GLib, Gio, QStore} = imports.gi;
const System = imports.system;

function assertEqual(actual, expected, message = '') {
    const a = JSON.stringify(actual), e = JSON.stringify(expected);
    if (a !== e)
        throw new Error(`${message} expected ${e}, got ${a}`);
}

function qstore(uri, sql) {
    const process = Gio.Subprocess.new(
        [GLib.getenv('QSTORE_TOOL'), '--store', uri, 'sql', sql],
        Gio.SubprocessFlags.STDERR_PIPE);
    const [, , err] = process.communicate_utf8(null, null);
    if (!process.get_successful())
        throw new Error(`qstore sql “${sql}” failed: ${err}`);
}

function record(changeSet, index) {
    const variant = changeSet.get_new_record(index);
    return variant === null ? null : variant.recursiveUnpack();
}

const tests = [];
function test(name, func) {
    tests.push([name, func]);
}

test('a follower hears what another process commits', () => {
    const dir = GLib.dir_make_tmp('qstore-gjs-changes-XXXXXX');
    const uri = `lmdb:${dir}/store`;
    try {
        qstore(uri, 'PRAGMA qstore.change_log = 100');
        qstore(uri, 'CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, n REAL)');

        const feed = QStore.ChangeFeed.new_follower(uri, 0);
        assertEqual(feed.is_follower(), true);
        const told = [];
        const gaps = [];
        const loop = new GLib.MainLoop(null, false);
        feed.connect('changes', (_feed, changeSet) => {
            told.push(changeSet);
            if (told.length === 5)
                loop.quit();
        });
        feed.connect('gap', (_feed, reason) => gaps.push(reason));
        feed.connect('failed', (_feed, error) => {
            gaps.push(`failed: ${error.message}`);
            loop.quit();
        });
        feed.follow();

        // The two transactions made before, then three written now.
        GLib.idle_add(GLib.PRIORITY_DEFAULT_IDLE, () => {
            qstore(uri, "INSERT INTO t VALUES (1, 'one', 1.5)");
            qstore(uri, "INSERT INTO t VALUES (2, 'two', NULL)");
            qstore(uri, "UPDATE t SET name = 'uno' WHERE id = 1");
            return GLib.SOURCE_REMOVE;
        });
        const timeout = GLib.timeout_add_seconds(GLib.PRIORITY_DEFAULT, 20, () => {
            loop.quit();
            return GLib.SOURCE_REMOVE;
        });
        loop.run();
        GLib.source_remove(timeout);

        assertEqual(gaps, [], 'gaps');
        assertEqual(told.map(c => c.get_tx_id()), [1, 2, 3, 4, 5], 'transactions');
        assertEqual(told[2].get_names(0), ['id', 'name', 'n'], 'names');
        assertEqual(record(told[2], 0), {id: 1, name: 'one', n: 1.5}, 'insert');
        assertEqual(told[3].get_new_record(0).lookup_value('n', null).get_type_string(), 'mv',
            'NULL');
        assertEqual(told[4].get_op(0), QStore.ChangeOp.UPDATE, 'update');
        assertEqual(told[4].get_old_record(0).recursiveUnpack().name, 'one', 'old');
        assertEqual(record(told[4], 0).name, 'uno', 'new');
        assertEqual(feed.get_position(), 5, 'position');
        const digest = QStore.change_digest_for_change(told[4], 0, 'search');
        assertEqual(digest.length, 64, 'digest');
        feed.close();
    } finally {
        GLib.spawn_command_line_sync(`rm -rf ${dir}`);
    }
});

test('change keys and occurrences', () => {
    const digest = 'ab'.repeat(32);
    const key = QStore.compose_change_key(digest, 2);
    assertEqual(key, `${digest}:2`);
    assertEqual(QStore.parse_change_key(key), [digest, 2]);
    assertEqual(QStore.parse_change_key(`${digest}:02`)[0], null);
    const counter = QStore.OccurrenceCounter.new(1000, 4);
    assertEqual([0, 1, 2].map(t => counter.next(digest, t)), [0, 1, 2]);
});

print(`1..${tests.length}`);
let failed = 0;
tests.forEach(([name, func], i) => {
    try {
        func();
        print(`ok ${i + 1} ${name}`);
    } catch (e) {
        failed++;
        print(`not ok ${i + 1} ${name}`);
        for (const line of `${e}\n${e.stack}`.split('\n'))
            print(`# ${line}`);
    }
});
System.exit(failed ? 1 : 0);
