// test-replica.js: live queries from JavaScript, their events on the main loop
//
// SPDX-License-Identifier: LGPL-2.1-or-later
//
// A consumer written the way the replica's documentation says: it keeps a
// query's rows from Hydrated, buffers Changed slices, applies them when its
// worker's Progressed confirms them, and compares what it holds with a
// fresh run of the query. Once per provider.

imports.gi.versions.GLib = '2.0';
imports.gi.versions.QStore = '1.0';
const {GLib, QStore} = imports.gi;
const {assert, assertEqual, run, test, withTmpDir} = imports.testutil;

const PROVIDERS = ['memory', 'lmdb', 'sqlite'];
const QUERY = 'SELECT id, name FROM item WHERE price > 1';
const TIMEOUT_S = 20;

const key = row => JSON.stringify(row);

class Consumer {
    constructor(replica, queryId) {
        this.replica = replica;
        this.queryId = queryId;
        this.rows = null;       // Map of row key → count, once hydrated
        this.pending = [];      // [tx, removed, added]
        this.tx = 0;
        this.kinds = [];
        this.payloads = [];     // [kind, payload] from the "event" signal
        this.handlers = [
            replica.connect('hydrated', (r, id, tx, rows) => {
                if (id !== this.queryId)
                    return;
                this.kinds.push('hydrated');
                this.rows = new Map();
                this.apply(rows.recursiveUnpack(), 1);
                this.tx = tx;
            }),
            replica.connect('changed', (r, id, tx, removed, added) => {
                if (id !== this.queryId)
                    return;
                this.kinds.push('changed');
                this.pending.push([tx, removed.recursiveUnpack(), added.recursiveUnpack()]);
            }),
            replica.connect('progressed', (r, worker, tx) => {
                if (worker !== r.get_worker_for_query(this.queryId))
                    return;
                this.kinds.push('progressed');
                this.pending = this.pending.filter(([sliceTx, removed, added]) => {
                    if (sliceTx > tx)
                        return true;
                    this.apply(removed, -1);
                    this.apply(added, 1);
                    return false;
                });
                this.tx = tx;
            }),
            replica.connect('faulted', (r, id) => {
                if (id === this.queryId)
                    this.kinds.push('faulted');
            }),
            replica.connect('event', (r, kind, payload) => {
                this.payloads.push([kind, payload.recursiveUnpack()]);
            }),
        ];
    }

    apply(rows, delta) {
        for (const row of rows) {
            const count = (this.rows.get(key(row)) ?? 0) + delta;
            if (count === 0)
                this.rows.delete(key(row));
            else
                this.rows.set(key(row), count);
        }
    }

    sorted() {
        return [...this.rows.keys()].sort();
    }

    disconnect() {
        this.handlers.forEach(h => this.replica.disconnect(h));
    }
}

// Runs the default main loop until @condition holds.
function runUntil(condition, what) {
    const context = GLib.MainContext.default();
    const deadline = GLib.get_monotonic_time() + TIMEOUT_S * 1000000;
    while (!condition()) {
        if (GLib.get_monotonic_time() > deadline)
            throw new Error(`no ${what} within ${TIMEOUT_S} s`);
        context.iteration(true);
    }
}

function uriFor(name, tmpdir) {
    if (name === 'memory')
        return 'memory:';
    if (name === 'sqlite')
        return `sqlite:${GLib.build_filenamev([tmpdir, 'shop.db'])}`;
    return `${name}:${GLib.build_filenamev([tmpdir, 'shop'])}`;
}

function withReplica(name, func) {
    withTmpDir(tmpdir => {
        const replica = QStore.Replica.open(uriFor(name, tmpdir), 2, 16);
        try {
            replica.exec_ddl('CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT, price REAL)');
            func(replica);
        } finally {
            replica.close();
        }
    });
}

function write(replica, statements) {
    const txn = replica.begin_write();
    for (const [sql, params] of statements)
        txn.exec(sql, params);
    return txn.commit();
}

function fresh(replica) {
    const result = replica.query(QUERY, null);
    const rows = [];
    for (let r = 0; r < result.get_n_rows(); r++) {
        const row = [];
        for (let c = 0; c < result.get_n_columns(); c++)
            row.push(result.get_value(r, c).recursiveUnpack());
        rows.push(key(row));
    }
    return rows.sort();
}

for (const name of PROVIDERS) {
    test(`${name}: events on the main loop`, () => withReplica(name, replica => {
        const insert = 'INSERT INTO item VALUES (?, ?, ?)';
        write(replica, [[insert, new GLib.Variant('(xsd)', [1, 'pear', 2.5])],
            [insert, new GLib.Variant('(xsd)', [2, 'fig', 0.5])]]);
        const consumer = new Consumer(replica, 7);
        try {
            const registered = replica.register_query(7, QUERY);
            assertEqual(registered, [true, 7 % 2], 'register_query');
            runUntil(() => consumer.rows !== null, 'hydrated');
            assertEqual(consumer.sorted(), [key([1, 'pear'])], 'hydrated rows');
            assertEqual(consumer.tx, replica.get_committed_tx_id(), 'hydrated at');

            const tx = write(replica, [
                ['UPDATE item SET price = 3 WHERE id = ?', new GLib.Variant('(x)', [2])],
                ['DELETE FROM item WHERE id = ?', new GLib.Variant('(x)', [1])],
                [insert, new GLib.Variant('(xsd)', [3, 'plum', 9])],
            ]);
            runUntil(() => consumer.tx >= tx, 'progressed');
            assertEqual(consumer.pending.length, 0, 'slices left');
            assertEqual(consumer.sorted(), [key([2, 'fig']), key([3, 'plum'])], 'rows');
            assertEqual(consumer.sorted(), fresh(replica), 'against a fresh run');
            assertEqual(consumer.kinds[0], 'hydrated', 'first event');
            assert(consumer.kinds.includes('changed'), 'a changed slice came');
            assertEqual(consumer.kinds[consumer.kinds.length - 1], 'progressed', 'last event');

            const kinds = consumer.payloads.map(([kind]) => kind);
            assert(kinds.includes('changed'), 'event carries changed');
            assert(consumer.payloads.some(([kind, p]) =>
                kind === 'progressed' && p[0] === 7 % 2 && p[1] === tx), 'event carries progressed');
        } finally {
            consumer.disconnect();
        }
    }));

    test(`${name}: registration refused while streaming`, () => withReplica(name, replica => {
        const txn = replica.begin_write();
        for (let start = 0; start < 1500; start += 500) {
            txn.exec('WITH RECURSIVE n(v) AS (SELECT ?1 UNION ALL SELECT v + 1 FROM n WHERE v < ?2) ' +
                "INSERT INTO item SELECT v, 'n' || v, v FROM n",
            new GLib.Variant('(xx)', [start, start + 499]));
        }
        assert(replica.view_is_speculative(), 'speculative while streaming');
        let refused = null;
        try {
            replica.register_query(1, QUERY);
        } catch (e) {
            refused = e;
        }
        assert(refused instanceof GLib.Error, 'registration refused');
        assert(refused.matches(QStore.ReplicaError, QStore.ReplicaError.SPECULATIVE),
            `${refused.message} is SPECULATIVE`);
        txn.commit();
        assert(!replica.view_is_speculative(), 'not speculative after the commit');

        const consumer = new Consumer(replica, 1);
        try {
            replica.register_query(1, QUERY);
            runUntil(() => consumer.rows !== null, 'hydrated');
            assertEqual(consumer.rows.size, 1498, 'hydrated rows');
            assertEqual(consumer.sorted(), fresh(replica), 'against a fresh run');
        } finally {
            consumer.disconnect();
        }
    }));
}

run();
