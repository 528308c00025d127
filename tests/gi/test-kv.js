// test-kv.js: the key/value layer from JavaScript, through GObject introspection
//
// SPDX-License-Identifier: LGPL-2.1-or-later

imports.gi.versions.GLib = '2.0';
imports.gi.versions.Gio = '2.0';
imports.gi.versions.QStore = '1.0';
const {GLib, Gio, QStore} = imports.gi;
const {assert, assertEqual, assertQStoreError, run, test, withTmpDir} = imports.testutil;

const PROVIDERS = ['memory', 'lmdb', 'sqlite'];
const Caps = QStore.Capabilities;
const EXPECTED_CAPABILITIES = {
    memory: Caps.ATOMIC_BATCH | Caps.SNAPSHOTS,
    lmdb: Caps.PERSISTENT | Caps.ATOMIC_BATCH | Caps.SNAPSHOTS | Caps.MULTI_PROCESS |
        Caps.WRITER_LOCK | Caps.WRITE_TXN,
    sqlite: Caps.PERSISTENT | Caps.ATOMIC_BATCH | Caps.SNAPSHOTS | Caps.MULTI_PROCESS |
        Caps.WRITER_LOCK | Caps.WRITE_TXN,
};
const NONE = QStore.WriteFlags.NONE;

const encoder = new TextEncoder();
const b = s => encoder.encode(s);
const hex = bytes => Array.from(bytes ?? [], x => x.toString(16).padStart(2, '0')).join('');

// Keys and values of every entry an iterator yields, as hex strings.
function collect(iter) {
    const entries = [];
    while (iter.next())
        entries.push([hex(iter.peek_key()), hex(iter.peek_value())]);
    return entries;
}

function lookupCapabilities(name) {
    // gboolean + GError: GJS 1.74 returns [true, capabilities].
    const result = QStore.lookup_provider_capabilities(name);
    return Array.isArray(result) ? result[1] : result;
}

function locationFor(name, tmpdir) {
    if (name === 'memory')
        return '';
    if (name === 'sqlite')
        return GLib.build_filenamev([tmpdir, 'data.db']);
    return GLib.build_filenamev([tmpdir, 'data']);
}

function withProvider(name, func) {
    withTmpDir(tmpdir => {
        const location = locationFor(name, tmpdir);
        const open = (flags = QStore.OpenFlags.NONE, query = '') =>
            QStore.Provider.new_for_uri(`${name}:${location}${query}`, flags);
        let provider = null;
        try {
            provider = open();
            // GJS 1.74 resolves the methods of only one interface of a type it
            // has no introspection data for (the plugin's provider class).
            assert(typeof provider.open_store === 'function',
                `QStore.Provider methods are not reachable on the ${name} provider: ` +
                'its plugin must add the GInitable interface before QStoreProvider');
            assertEqual(provider.get_name(), name);
            assertEqual(provider.get_location(), location);
            func(provider, open, tmpdir);
        } finally {
            if (provider)
                QStore.Provider.prototype.close_all.call(provider);
        }
    });
}

function fill(kv, keys) {
    for (const key of keys)
        assert(kv.put(b(key), b(`v:${key}`), NONE), `put ${key}`);
}

test('list providers', () => {
    const names = QStore.list_providers();
    assertEqual(names, [...names].sort());
    for (const name of PROVIDERS)
        assert(names.includes(name), `${name} in ${names}`);
});

test('lookup capabilities', () => {
    for (const name of PROVIDERS)
        assertEqual(lookupCapabilities(name), EXPECTED_CAPABILITIES[name], name);
});

test('unknown provider', () => {
    const e = assertQStoreError(QStore.Error.NOT_FOUND,
        () => QStore.Provider.new('no-such', null, QStore.OpenFlags.NONE));
    assert(e.message.includes('memory'), 'the message lists the providers');
    assertQStoreError(QStore.Error.NOT_FOUND,
        () => QStore.Provider.new_for_uri('no-such:/x', QStore.OpenFlags.NONE));
});

test('codec', () => {
    const C = QStore.Collation;
    const encode = (a, s) => hex(QStore.codec_encode_key(new GLib.Variant('(xs)', [a, s]),
        [C.BINARY, C.NOCASE], [false, false]).toArray());
    assert(encode(1, 'ABC') < encode(1, 'abd'), 'NOCASE order');
    assert(encode(-5, 'z') < encode(1, 'a'), 'integer order');
    assertEqual(encode(1, 'Abc'), encode(1, 'aBC'));

    const row = new GLib.Variant('(xsay)', [7, 'Keep Case', [0, 255]]);
    const decoded = QStore.codec_decode_row(QStore.codec_encode_row(row));
    const [n, text, blob] = decoded.recursiveUnpack();
    assertEqual([n, text, Array.from(blob)], [7, 'Keep Case', [0, 255]]);
});

for (const name of PROVIDERS) {
    test(`${name}: capabilities`, () => withProvider(name, provider => {
        assertEqual(provider.get_capabilities(), EXPECTED_CAPABILITIES[name]);
        assert(!provider.is_closed(), 'open');
    }));

    test(`${name}: put, get, delete`, () => withProvider(name, provider => {
        const kv = provider.open_store('main.t');
        assertEqual(kv.get_name(), 'main.t');
        assertEqual(kv.get(b('k1')), null);
        assert(kv.put(b('k1'), b('one'), NONE), 'put');
        assert(kv.put(new Uint8Array([0x6b, 0, 0xff]), new Uint8Array([0, 1, 0xff]),
            QStore.WriteFlags.SYNC), 'put binary');
        assert(kv.put(b('empty'), new Uint8Array(0), NONE), 'put empty');

        const value = kv.get(b('k1'));
        assert(value instanceof GLib.Bytes, 'get returns GLib.Bytes');
        assertEqual(hex(value.toArray()), hex(b('one')));
        assertEqual(hex(kv.get(new Uint8Array([0x6b, 0, 0xff])).toArray()), '0001ff');
        assertEqual(kv.get(b('empty')).get_size(), 0);
        assertEqual(kv.get(b('k')), null);

        assert(kv.delete(b('k1'), NONE), 'delete');
        assertEqual(kv.get(b('k1')), null);
        assertEqual(provider.list_stores(), ['main.t']);
        assertQStoreError(QStore.Error.INVALID_ARGUMENT, () => kv.put(new Uint8Array(0), b('x'), NONE));
    }));

    test(`${name}: iterate with bounds`, () => withProvider(name, provider => {
        const kv = provider.open_store('main.t');
        fill(kv, ['d', 'b', 'a', 'c', 'ba', 'e']);
        kv.put(new Uint8Array([0x62, 0]), b('v:b\0'), NONE);
        const keys = bounds => collect(kv.iterate(bounds)).map(([k]) => k);
        const [A, B, B0, BA, C, D, E] = ['a', 'b', 'b\0', 'ba', 'c', 'd', 'e'].map(s => hex(b(s)));

        assertEqual(keys(null), [A, B, B0, BA, C, D, E]);
        const bounds = QStore.Bounds.new();
        bounds.set_gte(b('b'));
        bounds.set_lt(b('d'));
        assertEqual(keys(bounds), [B, B0, BA, C]);
        bounds.set_reverse(true);
        assertEqual(keys(bounds), [C, BA, B0, B]);
        bounds.set_limit(2);
        assertEqual(keys(bounds), [C, BA]);
        bounds.set_reverse(false);
        assertEqual(keys(bounds), [B, B0]);
        bounds.set_limit(0);
        assertEqual(keys(bounds), []);
        bounds.unset_limit();
        bounds.set_gt(b('b'));
        bounds.set_lte(b('d'));
        assertEqual(keys(bounds), [B0, BA, C, D]);
        assertEqual(collect(kv.iterate(bounds))[0], [B0, hex(b('v:b\0'))]);

        // One iterator walks range after range, sought to each.
        const it = kv.iterate(null);
        assertEqual(it.next(), true);
        bounds.set_reverse(true);
        assertEqual(it.seek(bounds), true);
        assertEqual(collect(it).map(([k]) => k), [D, C, BA, B0]);
        it.seek(null);
        assertEqual(collect(it).map(([k]) => k), [A, B, B0, BA, C, D, E]);

        bounds.set_limit(-1);
        assertQStoreError(QStore.Error.INVALID_ARGUMENT, () => kv.iterate(bounds));
        assertQStoreError(QStore.Error.INVALID_ARGUMENT, () => it.seek(bounds));
    }));

    test(`${name}: batch`, () => withProvider(name, provider => {
        const kv = provider.open_store('main.t');
        fill(kv, ['gone', 'kept']);
        const batch = kv.new_batch();
        batch.put(b('x'), b('1'));
        batch.delete(b('gone'));
        batch.put(b('x'), b('last'));
        assertEqual(batch.get_n_ops(), 3);
        assertEqual(kv.get(b('x')), null);
        assert(batch.write(NONE), 'write');
        assertEqual(batch.get_n_ops(), 0);
        assertEqual(collect(kv.iterate(null)),
            [[hex(b('kept')), hex(b('v:kept'))], [hex(b('x')), hex(b('last'))]]);
    }));

    test(`${name}: atomic batch across three stores`, () => withProvider(name, provider => {
        const stores = ['main.a', 'main.b', 'main.c'].map(n => provider.open_store(n));
        const batch = provider.begin_atomic_batch();
        assert(batch instanceof QStore.AtomicBatch, 'an atomic batch');
        stores.forEach((kv, i) => batch.put(kv, b('key'), b(`value ${i}`)));
        batch.put(stores[2], b('extra'), b('x'));
        batch.delete(stores[2], b('extra'));
        assertEqual(batch.get_n_ops(), 5);
        assertEqual(stores[0].get(b('key')), null);
        assert(batch.commit(QStore.WriteFlags.SYNC), 'commit');
        stores.forEach((kv, i) =>
            assertEqual(collect(kv.iterate(null)), [[hex(b('key')), hex(b(`value ${i}`))]]));
    }));

    test(`${name}: ?atomic=0 withholds the atomic batch`, () => withProvider(name, (provider, open) => {
        provider.close_all();
        const plain = open(QStore.OpenFlags.NONE, '?atomic=0');
        assert(plain.get_flags() & QStore.OpenFlags.NO_ATOMIC_BATCH, 'flag set');
        assertEqual(plain.get_capabilities() & Caps.ATOMIC_BATCH, 0);
        assertEqual(plain.begin_atomic_batch(), null);
        plain.close_all();
    }));

    test(`${name}: snapshot`, () => withProvider(name, provider => {
        const kv = provider.open_store('main.t');
        fill(kv, ['a', 'b']);
        const snapshot = provider.begin_snapshot();
        kv.put(b('a'), b('changed'), NONE);
        kv.delete(b('b'), NONE);
        kv.put(b('c'), b('new'), NONE);

        assertEqual(hex(snapshot.get(kv, b('a')).toArray()), hex(b('v:a')));
        assertEqual(snapshot.get(kv, b('c')), null);
        const [found, value] = snapshot.lookup(kv, b('b'));
        assert(found, 'lookup finds b');
        assertEqual(hex(value), hex(b('v:b')));
        assertEqual(collect(snapshot.iterate(kv, null)).map(([k]) => k), [hex(b('a')), hex(b('b'))]);
        assertEqual(collect(kv.iterate(null)).map(([k]) => k), [hex(b('a')), hex(b('c'))]);
    }));

    test(`${name}: read-only`, () => withProvider(name, (provider, open) => {
        fill(provider.open_store('main.t'), ['a']);
        if (name !== 'memory')
            provider.close_all();
        const reader = open(QStore.OpenFlags.READ_ONLY);
        const kv = reader.open_store('main.t');
        if (name !== 'memory')
            assertEqual(hex(kv.get(b('a')).toArray()), hex(b('v:a')));
        assertQStoreError(QStore.Error.READ_ONLY, () => kv.put(b('b'), b('x'), NONE));
        assertQStoreError(QStore.Error.READ_ONLY, () => kv.delete(b('a'), NONE));
        reader.close_all();
    }));

    test(`${name}: use after close_all`, () => withProvider(name, provider => {
        const kv = provider.open_store('main.t');
        fill(kv, ['a']);
        provider.close_all();
        assert(provider.is_closed(), 'closed');
        assertQStoreError(QStore.Error.CLOSED, () => kv.get(b('a')));
        assertQStoreError(QStore.Error.CLOSED, () => kv.put(b('a'), b('x'), NONE));
        assertQStoreError(QStore.Error.CLOSED, () => kv.iterate(null));
        assertQStoreError(QStore.Error.CLOSED, () => provider.open_store('main.t'));
    }));
}

run();
