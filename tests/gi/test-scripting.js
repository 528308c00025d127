// test-scripting.js: SQL from JavaScript through the qstore.js helper
//
// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Parameters as arrays and objects of plain values, rows as arrays,
// transactions and databases scoped to a callback, errors that carry their
// code, every value at its edges; once per provider. Prints TAP.

const {QStore} = imports.qstore;
imports.gi.versions.GIRepository = '2.0';
const {GIRepository, Gio, GLib} = imports.gi;
const {assert, assertEqual, assertThrows, assertQStoreError, run, show, test, withTmpDir} =
    imports.testutil;

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);
const bytes = (...values) => new Uint8Array(values);

// Calls @func with a database of @provider holding a table `item`, a
// function that reopens it (for memory:, gives the same one) and its URI.
function withDatabase(provider, func) {
    withTmpDir(tmpdir => {
        const uri = {
            memory: 'memory:',
            lmdb: `lmdb:${tmpdir}/shop`,
            sqlite: `sqlite:${tmpdir}/shop.db`,
        }[provider];
        let db = QStore.Database.open(uri);
        const reopen = () => {
            if (provider !== 'memory') {
                db.close();
                db = QStore.Database.open(uri);
            }
            return db;
        };
        try {
            db.execute('CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, ' +
                       'price REAL, photo BLOB, extra)');
            func(db, reopen, uri);
        } finally {
            try {
                db.close();
            } catch (e) {
                if (!(e instanceof GLib.Error && e.matches(QStore.Error, QStore.Error.CLOSED)))
                    throw e;
            }
        }
    });
}

for (const provider of ['memory', 'lmdb', 'sqlite']) {
    test(`${provider}: positional and named parameters`, () => withDatabase(provider, (db, reopen) => {
        assertEqual(db.execute('INSERT INTO item (name, price, photo) VALUES (?, ?, ?)',
            ['pear', 0.5, bytes(0x89, 0x50, 0)]), 1);
        assertEqual(db.execute('INSERT INTO item (name, price, photo) VALUES (:name, :price, :photo)',
            {name: 'apple', price: null, photo: new Uint8Array()}), 1);
        assertEqual(db.execute('UPDATE item SET price = @price WHERE name = $name',
            {price: 0.25, name: 'apple'}), 1);
        assertEqual(db.execute('UPDATE item SET price = 1 WHERE name = ?', ['nothing']), 0);
        db = reopen();
        assertEqual(db.query('SELECT name, price, photo, typeof(photo) FROM item ORDER BY id').toArray(),
            [['pear', 0.5, bytes(0x89, 0x50, 0), 'blob'], ['apple', 0.25, bytes(), 'blob']]);
        assertEqual(db.query('SELECT price FROM item WHERE name = :n', {n: 'pear'}).toArray(), [[0.5]]);
    }));

    test(`${provider}: parameter mistakes`, () => withDatabase(provider, db => {
        assertQStoreError(QStore.Error.INVALID_ARGUMENT,
            () => db.execute('INSERT INTO item (name) VALUES (?)'), 'takes 1 parameter but 0 were given');
        assertQStoreError(QStore.Error.INVALID_ARGUMENT,
            () => db.execute('INSERT INTO item (name) VALUES (:name)', {}), 'No value for parameter “:name”');
        assertQStoreError(QStore.Error.INVALID_ARGUMENT,
            () => db.execute('INSERT INTO item (name) VALUES (:name)', {name: 'x', price: 1}),
            '“price” is not a parameter of the statement');
        assertQStoreError(QStore.Error.INVALID_ARGUMENT,
            () => db.execute('INSERT INTO item (id, name) VALUES (?, :name)', {name: 'x'}), 'is positional');
        assertThrows(() => db.execute('INSERT INTO item (name) VALUES (?)', [{not: 'a value'}]),
            e => assert(e instanceof TypeError, `${e}`), 'an object value');
        assertThrows(() => db.execute('INSERT INTO item (name) VALUES (?)', 'pear'),
            e => assert(e instanceof TypeError, `${e}`), 'a string as parameters');
        assertThrows(() => db.execute('INSERT INTO item (name, extra) VALUES (?, ?)', ['x', 2n ** 63n]),
            e => assert(e instanceof RangeError, `${e}`), 'a BigInt beyond 64 bits');
        assertThrows(() => db.execute('INSERT INTO item (name) VALUES (?)', ['a\0b']),
            e => assert(e instanceof TypeError && e.message.includes('CAST(? AS TEXT)'), `${e}`),
            'a NUL inside a string');
        assertEqual(db.query('SELECT count(*) FROM item').toArray(), [[0]]);
    }));

    test(`${provider}: prepared statements`, () => withDatabase(provider, db => {
        // Every value goes through the typed binds as the GLib.Variant it
        // stands for goes through query()'s GVariant parameters.
        const sql = 'SELECT ?1, typeof(?1), quote(?1)';
        const describe = db.prepare(sql);
        assert(describe instanceof QStore.PreparedStatement, 'db.prepare() gives a PreparedStatement');
        const int64 = n => GLib.Variant.parse(new GLib.VariantType('x'), String(n), null, null);
        const pairs = [[null, new GLib.Variant('mv', null)], [undefined, new GLib.Variant('mv', null)],
            [0, int64(0)], [-1, int64(-1)], [2 ** 53 - 1, int64(2 ** 53 - 1)], [2 ** 60, int64(2n ** 60n)],
            [-0, new GLib.Variant('d', -0)], [2.5, new GLib.Variant('d', 2.5)],
            [NaN, new GLib.Variant('d', NaN)], [-Infinity, new GLib.Variant('d', -Infinity)],
            ['', new GLib.Variant('s', '')], ['😀é', new GLib.Variant('s', '😀é')],
            [true, int64(1)], [false, int64(0)], [INT64_MAX, int64(INT64_MAX)], [INT64_MIN, int64(INT64_MIN)],
            [bytes(), new GLib.Variant('ay', bytes())], [bytes(0, 255), new GLib.Variant('ay', bytes(0, 255))],
            [new GLib.Bytes(bytes(1, 2)), new GLib.Variant('ay', bytes(1, 2))],
            [bytes(3, 4).buffer, new GLib.Variant('ay', bytes(3, 4))],
            [new GLib.Variant('s', 'boxed'), new GLib.Variant('s', 'boxed')]];
        for (const [value, variant] of pairs) {
            const expected = db.query(sql, GLib.Variant.new_tuple([variant])).toArray();
            assertEqual(describe.query([value]).toArray(), expected, `${typeof value} ${String(value)}`);
            assertEqual(db.query(sql, [value]).toArray(), expected, `${typeof value} ${String(value)}`);
            assertEqual(describe.queryRow([value]), expected[0], `queryRow ${typeof value} ${String(value)}`);
            assertEqual(db.queryRow(sql, [value]), expected[0], `queryRow ${typeof value} ${String(value)}`);
        }
        const named = db.prepare('SELECT :a, @b, $c');
        assertEqual(named.query({a: 1, b: 'two', $c: null}).toArray(), [[1, 'two', null]]);
        assertEqual(named.query().toArray(), [[1, 'two', null]], 'values stay bound');

        const insert = db.prepare('INSERT INTO item (name, price) VALUES (:name, :price)');
        assertEqual(insert.execute({name: 'a', price: 1}), 1);
        assertQStoreError(QStore.Error.CONSTRAINT, () => insert.execute({name: 'a', price: 2}),
            'UNIQUE constraint failed');
        assertQStoreError(QStore.Error.INVALID_ARGUMENT, () => insert.execute({name: 'b'}),
            'No value for parameter “:price”');
        assertQStoreError(QStore.Error.INVALID_ARGUMENT, () => insert.execute({name: 'b', cost: 1}),
            '“cost” is not a parameter of the statement');
        assertQStoreError(QStore.Error.INVALID_ARGUMENT,
            () => insert.execute({name: 'b', ':name': 'c', price: 1}), 'is given twice');
        assertQStoreError(QStore.Error.INVALID_ARGUMENT, () => insert.execute(['b', 1, 2]),
            'takes 2 parameters but 3 were given');
        assertQStoreError(QStore.Error.INVALID_ARGUMENT, () => insert.bind_int64(3, 1),
            'there is no parameter 3');
        assertThrows(() => insert.execute([{not: 'a value'}, 1]),
            e => assert(e instanceof TypeError, `${e}`), 'an object value');
        assertThrows(() => insert.execute('b'), e => assert(e instanceof TypeError, `${e}`),
            'a string as parameters');
        assertEqual(db.query('SELECT name, price FROM item').toArray(), [['a', 1]]);

        // DDL between runs is seen.
        const all = db.prepare('SELECT * FROM item WHERE name = ?');
        db.execute('ALTER TABLE item ADD COLUMN added DEFAULT 7');
        assertEqual(all.query(['a']).get_row(0).slice(-2), [null, 7]);
        assertQStoreError(QStore.Error.SYNTAX, () => db.prepare('SELEC 1'));
        assertQStoreError(QStore.Error.INVALID_ARGUMENT, () => db.prepare('SELECT 1; SELECT 2'));
    }));

    test(`${provider}: one row with queryRow()`, () => withDatabase(provider, db => {
        db.executeMany('INSERT INTO item (name, price, photo, extra) VALUES (?, ?, ?, ?)',
            [['a', 1.5, bytes(1, 0), INT64_MAX], ['b', null, null, 'text'], ['c', 3, bytes(), 7]]);
        const sql = 'SELECT name, price, photo, extra FROM item WHERE id >= ? ORDER BY id';
        assertEqual(db.queryRow(sql, [1]), ['a', 1.5, bytes(1, 0), INT64_MAX], 'the first of three rows');
        assertEqual(db.queryRow(sql, [2]), ['b', null, null, 'text']);
        assertEqual(db.queryRow(sql, [4]), null, 'no row');
        assertEqual(db.queryRow('SELECT count(*) FROM item'), [3], 'without parameters');

        // The statement stays on the row, for step() to go on from; each
        // call runs the statement anew, and so sees what was written since.
        const first = db.prepare('SELECT name FROM item ORDER BY id DESC');
        assertEqual(first.queryRow(), ['c']);
        db.execute('INSERT INTO item (name) VALUES (?)', ['d']);
        assert(first.step(), 'the next row of the same run');
        assertEqual(first.get_text(0), 'b');
        assertEqual(first.queryRow(), ['d'], 'a new run');

        // A write runs and gives no row; one that fails throws and writes
        // nothing; so do mistakes in the parameters.
        const insert = db.prepare('INSERT INTO item (name) VALUES (?)');
        assertEqual(insert.queryRow(['e']), null);
        assertQStoreError(QStore.Error.CONSTRAINT, () => insert.queryRow(['e']), 'UNIQUE constraint failed');
        assertQStoreError(QStore.Error.INVALID_ARGUMENT, () => db.queryRow(sql, [1, 2]),
            'takes 1 parameter but 2 were given');
        assertQStoreError(QStore.Error.INVALID_ARGUMENT, () => db.queryRow(sql), 'takes 1 parameter but 0');
        assertEqual(db.queryRow('SELECT count(*), group_concat(name) FROM item'), [5, 'a,b,c,d,e']);
    }));

    test(`${provider}: values at their edges`, () => withDatabase(provider, (db, reopen) => {
        const insert = 'INSERT INTO item (id, name, price, extra) VALUES (?, ?, ?, ?)';
        db.execute(insert, [1, '', null, new Uint8Array()]);
        db.execute(insert, [2, 'max', null, INT64_MAX]);
        db.execute(insert, [3, 'min', null, INT64_MIN]);
        db.execute(insert, [4, 'zero', -0, -0]);
        db.execute(insert, [5, 'true', null, true]);
        db.execute(insert, [6, 'nan', null, NaN]);
        db.execute(insert, [7, 'inf', null, -Infinity]);
        db.execute('INSERT INTO item (id, name, extra) VALUES (?, ?, CAST(? AS TEXT))', [8, 'nul', bytes(97, 0, 98)]);
        db.execute('INSERT INTO item (id, name, extra) VALUES (?, ?, CAST(? AS TEXT))', [9, 'latin1', bytes(0x63, 0xe9)]);
        db.execute(insert, [10, '😀', null, 'é']);
        db.execute(insert, [11, 'safe', null, 2 ** 53 - 1]);
        db.execute(insert, [12, 'real', null, new GLib.Variant('d', 1)]);
        db = reopen();
        const rows = db.query('SELECT id, name, extra, typeof(extra), hex(extra) FROM item ORDER BY id').toArray();
        assertEqual(rows[0], [1, '', bytes(), 'blob', ''], 'empty blob');
        assertEqual(rows[1].slice(2, 4), [INT64_MAX, 'integer'], 'int64 max');
        assertEqual(rows[2].slice(2, 4), [INT64_MIN, 'integer'], 'int64 min');
        assertEqual(rows[4].slice(2, 4), [1, 'integer'], 'true');
        assertEqual(rows[5].slice(2, 4), [null, 'null'], 'NaN is NULL, as in SQLite');
        assertEqual(rows[6].slice(2, 4), [-Infinity, 'real'], '-inf');
        // Text a GLib string cannot hold reads back made valid; the store
        // keeps every byte, and CAST(… AS BLOB) gives them back.
        assertEqual(rows[7].slice(2), ['a\ufffdb', 'text', '610062'], 'NUL inside text');
        assertEqual(rows[8].slice(2), ['c\ufffd', 'text', '63E9'], 'text that is not UTF-8');
        assertEqual(db.query('SELECT CAST(extra AS BLOB) FROM item WHERE id IN (8, 9) ORDER BY id').toArray(),
            [[bytes(97, 0, 98)], [bytes(0x63, 0xe9)]]);
        assertEqual(rows[9].slice(1, 4), ['😀', 'é', 'text'], 'non-ASCII');
        assertEqual(rows[10].slice(2, 4), [2 ** 53 - 1, 'integer'], 'largest safe integer, a Number');
        assertEqual(rows[11].slice(2, 4), [1, 'real'], 'a REAL through a Variant');
        // -0 keeps its sign without affinity, becomes 0 in a REAL column.
        assertEqual(db.query('SELECT price, extra FROM item WHERE id = 4').get_row(0), [0, -0], '±0');
        assertEqual(db.query('SELECT typeof(?1), length(?1), ?1 = x\'\'', [new Uint8Array()]).get_row(0),
            ['blob', 0, 1], 'an empty blob stays a blob');
    }));

    test(`${provider}: rows are arrays`, () => withDatabase(provider, db => {
        assertEqual(db.executeMany('INSERT INTO item (name, price) VALUES (?, ?)', [['a', 1.5], ['b', null]]), 2);
        const result = db.query('SELECT id, name, price FROM item ORDER BY id');
        const rows = [[1, 'a', 1.5], [2, 'b', null]];
        assertEqual([...result], rows, 'iteration');
        assertEqual([result.get_row(0), result.get_row(1)], rows, 'get_row');
        assertEqual(result.get_value(1, 1), 'b');
        assertEqual(result.columnNames(), ['id', 'name', 'price']);
        const item = result.get_item(0);
        assert(item instanceof QStore.Row, 'items are QStore.Row');
        assertEqual([...item], rows[0], 'a Row iterates');
        assertEqual(item.get_values(), rows[0], 'Row.get_values');
        assertEqual(item.get_value(2), 1.5, 'Row.get_value');
        const names = [];
        for (const [, name] of db.query('SELECT id, name FROM item ORDER BY id'))
            names.push(name);
        assertEqual(names, ['a', 'b']);
    }));

    test(`${provider}: errors carry their code`, () => withDatabase(provider, db => {
        db.execute('INSERT INTO item (name) VALUES (?)', ['pear']);
        assertQStoreError(QStore.Error.CONSTRAINT,
            () => db.execute('INSERT INTO item (name) VALUES (?)', ['pear']), 'UNIQUE constraint failed: item.name');
        for (const sql of ['SELEC * FROM item', 'SELECT (1', "SELECT 'open", 'INSERT INTO item VALUES'])
            assertQStoreError(QStore.Error.SYNTAX, () => db.query(sql));
        assertQStoreError(QStore.Error.SYNTAX, () => db.exec('SELEC 1'));
        assertQStoreError(QStore.Error.NOT_FOUND, () => db.query('SELECT * FROM nowhere'), 'no such table');
    }));

    test(`${provider}: transactions`, () => withDatabase(provider, (db, reopen) => {
        assertEqual(db.transaction(() => db.execute('INSERT INTO item (name) VALUES (?)', ['kept'])), 1);
        assertThrows(() => db.transaction(() => {
            db.execute('INSERT INTO item (name) VALUES (?)', ['undone']);
            throw new RangeError('boom');
        }), e => assert(e instanceof RangeError, `${e}`), 'the error of the callback');
        db.transaction(() => {
            db.execute('INSERT INTO item (name) VALUES (?)', ['outer']);
            assertQStoreError(QStore.Error.CONSTRAINT, () => db.transaction(() => {
                db.execute('INSERT INTO item (name) VALUES (?)', ['inner']);
                db.execute('INSERT INTO item (name) VALUES (?)', ['kept']);
            }));
            db.transaction(() => db.execute('INSERT INTO item (name) VALUES (?)', ['inner kept']));
        });
        db.transaction(() => {});
        db = reopen();
        assertEqual(db.query('SELECT name FROM item ORDER BY id').toArray(),
            [['kept'], ['outer'], ['inner kept']]);
    }));

    test(`${provider}: a read transaction`, () => withDatabase(provider, db => {
        const coordinator = db.get_coordinator();
        db.execute('INSERT INTO item (name) VALUES (?)', ['first']);
        coordinator.begin_read();
        try {
            assertEqual(db.query('SELECT count(*) FROM item').toArray(), [[1]]);
            assertQStoreError(QStore.Error.READ_ONLY,
                () => db.execute('INSERT INTO item (name) VALUES (?)', ['refused']), 'read transaction');
        } finally {
            coordinator.end_read();
        }
        db.execute('INSERT INTO item (name) VALUES (?)', ['second']);
        assertEqual(db.query('SELECT name FROM item ORDER BY id').toArray(), [['first'], ['second']]);
    }));

    test(`${provider}: a database scoped to a callback`, () => withDatabase(provider, (db, reopen, uri) => {
        if (provider !== 'memory')
            db.close();
        let inside = null;
        const answer = QStore.Database.using(uri, scoped => {
            inside = scoped;
            return scoped.query('SELECT 6 * ?', [7]).get_value(0, 0);
        });
        assertEqual(answer, 42);
        assertQStoreError(QStore.Error.CLOSED, () => inside.query('SELECT 1'));
        assertThrows(() => QStore.Database.using(uri, scoped => {
            inside = scoped;
            throw new RangeError('boom');
        }), e => assert(e instanceof RangeError, `${e}`), 'the error of the callback');
        assertQStoreError(QStore.Error.CLOSED, () => inside.query('SELECT 1'));
    }));

    test(`${provider}: the catalog`, () => withDatabase(provider, db => {
        db.execute('CREATE INDEX item_price ON item (price)');
        db.execute('CREATE VIEW cheap AS SELECT name FROM item WHERE price < 1');
        const entries = db.catalog().map(e => [e.get_kind(), e.get_name()]);
        assert(entries.some(([k, n]) => k === QStore.CatalogKeyKind.TABLE && n === 'item'), show(entries));
        assert(entries.some(([k, n]) => k === QStore.CatalogKeyKind.VIEW && n === 'cheap'), show(entries));
        const [table] = db.catalog().filter(e => e.get_name() === 'item');
        assert(table.get_index_names().includes('item_price'), 'index listed');
    }));
}

test('fault injection is not in the typelib', () => {
    const repository = GIRepository.Repository.get_default();
    for (const name of ['fault_arm', 'fault_disarm_all', 'fault_check']) {
        assertEqual(repository.find_by_name('QStore', name), null, name);
        assertEqual(QStore[name], undefined, name);
    }
});

// Integers a Number cannot hold come back as exact BigInts, and reading
// them prints nothing: GJS warns on stderr for every gint64 a call returns
// that a Number cannot hold, so the helper must never ask for one.
test('large integers are read without warnings', () => {
    const script = `
        const {QStore} = imports.qstore;
        const db = QStore.Database.open('memory:');
        const sql = 'SELECT 9007199254740993, 9223372036854775807, -9223372036854775808, ' +
                    '9007199254740992, 9007199254740991, -9007199254740991, 0, -1';
        print(db.query(sql).get_row(0).map(v => \`\${typeof v} \${v}\`).join(','));
        print(db.queryRow(sql).map(v => \`\${typeof v} \${v}\`).join(','));
        db.close();`;
    const child = Gio.Subprocess.new(['gjs', '-c', script],
        Gio.SubprocessFlags.STDOUT_PIPE | Gio.SubprocessFlags.STDERR_PIPE);
    const [, out, err] = child.communicate_utf8(null, null);
    assert(child.get_successful(), `the script failed: ${err}`);
    assertEqual(err, '', 'nothing on stderr');
    const row = 'bigint 9007199254740993,bigint 9223372036854775807,bigint -9223372036854775808,' +
        'bigint 9007199254740992,number 9007199254740991,number -9007199254740991,number 0,number -1';
    assertEqual(out, `${row}\n${row}\n`);
});

run();
