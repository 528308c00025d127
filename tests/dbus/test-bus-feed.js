// test-bus-feed.js: GJS follows qstore serve through QStore.ChangeFeed
//
// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Runs under dbus-run-session with a server already serving a table t as
// org.qstore.Server.gjsfeed (run-with-server.sh), and the build tree's
// typelib.
imports.gi.versions.Gio = '2.0';
imports.gi.versions.QStore = '1.0';
const {Gio, GLib, QStore} = imports.gi;

let n = 0;
function ok(condition, what) {
    n++;
    print(`${condition ? 'ok' : 'not ok'} ${n} - ${what}`);
    if (!condition)
        imports.system.exit(1);
}

const loop = GLib.MainLoop.new(null, false);
function runUntil(done, ms = 10000) {
    const deadline = GLib.timeout_add(GLib.PRIORITY_DEFAULT, ms, () => {
        loop.quit();
        return GLib.SOURCE_REMOVE;
    });
    const poll = GLib.timeout_add(GLib.PRIORITY_DEFAULT, 10, () => {
        if (done())
            loop.quit();
        return GLib.SOURCE_CONTINUE;
    });
    loop.run();
    GLib.source_remove(poll);
    if (GLib.main_context_default().find_source_by_id(deadline))
        GLib.source_remove(deadline);
    return done();
}

// Made without blocking, on the main loop.
let feed = null;
QStore.ChangeFeed.new_for_bus(null, 'gjsfeed', QStore.BusFollowFlags.NONE, null, (source, result) => {
    feed = QStore.ChangeFeed.new_for_bus_finish(result);
});
ok(runUntil(() => feed !== null), 'the feed is made');
ok(feed.bus_name === 'org.qstore.Server.gjsfeed', 'it follows the server of that id');
ok(feed.server_owner !== null, 'the server took the subscription');

const sets = [];
const gaps = [];
feed.connect('changes', (f, set) => {
    const rows = [];
    for (let i = 0; i < set.get_n_changes(); i++)
        rows.push([set.get_table(i), set.get_op(i), set.get_new_row(i).recursiveUnpack()]);
    sets.push([set.get_tx_id(), rows]);
});
feed.connect('gap', (f, reason) => gaps.push(reason));

const bus = Gio.bus_get_sync(Gio.BusType.SESSION, null);
function execute(sql) {
    const reply = bus.call_sync('org.qstore.Server.gjsfeed', '/org/qstore/Server', 'org.qstore.Server1',
        'Execute', new GLib.Variant('(s)', [sql]), null, Gio.DBusCallFlags.NONE, -1, null);
    return reply.deepUnpack()[0];
}
const first = execute("INSERT INTO t VALUES (1, 'from gjs')");
const second = execute("INSERT INTO t VALUES (2, 'two'), (3, NULL)");
ok(runUntil(() => sets.length === 2), 'two change sets arrive');
ok(sets[0][0] === first && sets[1][0] === second, 'in commit order, with their transaction ids');
ok(sets[0][1].length === 1 && sets[0][1][0][0] === 't' && sets[0][1][0][1] === QStore.ChangeOp.INSERT,
    'the change names its table and op');
ok(sets[0][1][0][2][0] === 1 && sets[0][1][0][2][1] === 'from gjs', 'the new row holds the values');
ok(sets[1][1].length === 2 && sets[1][1][1][2][1] === null, 'NULL is null');
ok(gaps.length === 0, 'no gap');

let threw = null;
try {
    QStore.ChangeFeed.new_for_bus_sync(null, 'nobody', QStore.BusFollowFlags.NONE, null);
} catch (e) {
    threw = e;
}
ok(threw !== null && threw.matches(QStore.Error, QStore.Error.NOT_FOUND) &&
   threw.message.includes('org.qstore.Server.nobody'), 'a missing server is NOT_FOUND, named');
feed.close();
ok(feed.server_owner === null, 'closed, it follows no server');
print(`1..${n}`);
