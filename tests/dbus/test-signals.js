// test-signals.js: GJS subscribes through a Gio.DBusProxy and hears Committed
//
// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Runs under dbus-run-session with a server already serving as
// org.qstore.Server.gjs (see meson.build).
imports.gi.versions.Gio = '2.0';
const {Gio, GLib} = imports.gi;

let n = 0;
function ok(condition, what) {
    n++;
    print(`${condition ? 'ok' : 'not ok'} ${n} - ${what}`);
    if (!condition)
        imports.system.exit(1);
}

const proxy = Gio.DBusProxy.new_for_bus_sync(Gio.BusType.SESSION, Gio.DBusProxyFlags.NONE,
    null, 'org.qstore.Server.gjs', '/org/qstore/Server', 'org.qstore.Server1', null);
ok(proxy.get_name_owner() !== null, 'the server is on the bus');
ok(proxy.get_cached_property('Provider').unpack() === 'lmdb', 'Provider is lmdb');

const heard = [];
proxy.connect('g-signal', (p, sender, name, parameters) => heard.push([name, parameters]));
proxy.call_sync('Subscribe', null, Gio.DBusCallFlags.NONE, -1, null);
const [tx] = proxy.call_sync('Execute', new GLib.Variant('(s)', ["INSERT INTO t VALUES (1, 'from gjs')"]),
    Gio.DBusCallFlags.NONE, -1, null).deepUnpack();

const loop = GLib.MainLoop.new(null, false);
const deadline = GLib.timeout_add(GLib.PRIORITY_DEFAULT, 10000, () => loop.quit());
const poll = GLib.timeout_add(GLib.PRIORITY_DEFAULT, 20, () => {
    if (heard.some(([name]) => name === 'CommittedRows'))
        loop.quit();
    return GLib.SOURCE_CONTINUE;
});
loop.run();
GLib.source_remove(deadline);
GLib.source_remove(poll);

const committed = heard.filter(([name]) => name === 'Committed').map(([, p]) => p.deepUnpack());
ok(committed.length === 1 && committed[0][0] === tx, 'Committed carries the transaction');
ok(committed.length === 1 && committed[0][2][0] === 'main.t' && committed[0][3] === 1,
    'Committed names the table and counts one row');
const rows = heard.filter(([name]) => name === 'CommittedRows').map(([, p]) => p.deepUnpack());
ok(rows.length === 1 && JSON.parse(rows[0][3])[0].new[1] === 'from gjs', 'CommittedRows has the row');
print(`1..${n}`);
