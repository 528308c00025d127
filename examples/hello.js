#!/usr/bin/gjs
// hello.js: store, read and walk a few keys with qstore, from JavaScript
//
// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Usage: gjs hello.js [LMDB-DIRECTORY]
// Without a directory, the data lives in memory.

imports.gi.versions.QStore = '1.0';
const {QStore} = imports.gi;
const {programArgs} = imports.system;

const FRUITS = [
    ['apple', 'red'],
    ['banana', 'yellow'],
    ['cherry', 'dark red'],
    ['date', 'brown'],
    ['elderberry', 'purple'],
];

const encoder = new TextEncoder();
const decoder = new TextDecoder();

let provider;
if (programArgs.length > 0)
    provider = QStore.Provider.new('lmdb', programArgs[0], QStore.OpenFlags.NONE);
else
    provider = QStore.Provider.new_for_uri('memory:', QStore.OpenFlags.NONE);
const store = provider.open_store('main.fruit');

for (const [fruit, color] of FRUITS)
    store.put(encoder.encode(fruit), encoder.encode(color), QStore.WriteFlags.NONE);

print(`cherry: ${decoder.decode(store.get(encoder.encode('cherry')).toArray())}`);

// Keys from "b" up to, not including, "d".
const bounds = QStore.Bounds.new();
bounds.set_gte(encoder.encode('b'));
bounds.set_lt(encoder.encode('d'));
print('from b to d:');
const it = store.iterate(bounds);
while (it.next())
    print(`  ${decoder.decode(it.peek_key())}: ${decoder.decode(it.peek_value())}`);

provider.close_all();
