// qstore.js: JavaScript conveniences over the QStore typelib, for GJS
//
// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Installed into $datadir/gjs-1.0, which GJS searches, so a script (or an
// ES module) reaches it as `imports.qstore`:
//
//     const {QStore} = imports.qstore;
//
//     const db = QStore.Database.open('lmdb:/tmp/shop');
//     db.execute('CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT, price REAL)');
//     db.execute('INSERT INTO item (name, price) VALUES (?, ?)', ['pear', 0.5]);
//     db.execute('UPDATE item SET price = :p WHERE name = :n', {p: 0.4, n: 'pear'});
//     db.transaction(() => {              // commits, or rolls back if it throws
//         db.execute('DELETE FROM item WHERE price > ?', [1]);
//     });
//     for (const [name, price] of db.query('SELECT name, price FROM item'))
//         print(name, price);
//     db.close();
//
//     QStore.Database.using('memory:', db => { … });   // opens, runs, closes
//
// query(), execute() and executeMany() keep the statements they run
// prepared and bind their parameters with typed calls; db.prepare(sql)
// gives such a statement to hold:
//
//     const lookup = db.prepare('SELECT price FROM item WHERE name = ?');
//     for (const name of names)
//         print(lookup.query([name]).get_row(0));
//
// queryRow() gives the first row alone (an array, or null), read without
// making a QStore.Result: the quick way to one row.
//
//     const [price] = db.queryRow('SELECT price FROM item WHERE id = ?', [7]);
//
// Parameters are an array (positional: `?`, `?NNN`) or a plain object
// (named: `:name`, `@name`, `$name`, keyed without the prefix) of null or
// undefined (NULL), booleans, numbers (an integral number is an INTEGER,
// any other a REAL; pass `new GLib.Variant('d', 1)` for the REAL 1.0),
// BigInts (INTEGER), strings, Uint8Arrays or GLib.Bytes (BLOB), or
// GLib.Variants. Rows are arrays of plain values: integers as numbers,
// or as BigInts beyond Number.MAX_SAFE_INTEGER, so no digit is lost; BLOBs
// as Uint8Arrays; NULL as null. Iterating a result, result.get_row() and a
// QStore.Row all give the same arrays.
//
// Errors are GLib.Error in the QStore.Error domain, carrying the code:
//
//     try { … } catch (e) {
//         if (e.matches(QStore.Error, QStore.Error.CONSTRAINT)) …
//     }

/* exported QStore */

imports.gi.versions.QStore = '1.0';
const {GLib} = imports.gi;
var QStore = imports.gi.QStore;

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const INT64 = new GLib.VariantType('x');

function int64Variant(big, where) {
    if (big < INT64_MIN || big > INT64_MAX)
        throw new RangeError(`${where}: ${big} does not fit in 64 signed bits; pass it as a string`);
    // Through its text, so that no digit is rounded on the way.
    return GLib.Variant.parse(INT64, big.toString(), null, null);
}

// What SQL holds, as sqlValue() tells it.
const NULL = 0, INTEGER = 1, REAL = 2, TEXT = 3, BLOB = 4, VARIANT = 5;

// A JavaScript value as [kind, plain value] for a parameter; @where names
// it in errors.
function sqlValue(value, where) {
    switch (typeof value) {
    case 'number':
        if (Number.isSafeInteger(value) && !Object.is(value, -0))
            return [INTEGER, value];
        if (Number.isInteger(value) && value >= -(2 ** 63) && value < 2 ** 63 &&
            !Object.is(value, -0))
            return [VARIANT, int64Variant(BigInt(value), where)];
        return [REAL, value];
    case 'string':
        if (value.includes('\0')) {
            throw new TypeError(`${where}: the string holds a NUL character, which GLib ` +
                                'strings cannot carry; pass the bytes as a Uint8Array and ' +
                                'write CAST(? AS TEXT) in the SQL');
        }
        return [TEXT, value];
    case 'boolean':
        // SQLite has no booleans: true and false are 1 and 0.
        return [INTEGER, value ? 1 : 0];
    case 'bigint':
        return [VARIANT, int64Variant(value, where)];
    }
    if (value === null || value === undefined)
        return [NULL, null];
    if (value instanceof GLib.Variant)
        return [VARIANT, value];
    if (value instanceof Uint8Array)
        return [BLOB, new GLib.Bytes(value)];
    if (value instanceof GLib.Bytes)
        return [BLOB, value];
    if (value instanceof ArrayBuffer)
        return [BLOB, new GLib.Bytes(new Uint8Array(value))];
    throw new TypeError(`${where}: a ${value?.constructor?.name ?? typeof value} cannot be ` +
                        'stored; use null, a boolean, number, BigInt, string, Uint8Array ' +
                        'or a GLib.Variant');
}

// A result value (possibly boxed in `v`) as a plain JavaScript value.
function valueOf(variant) {
    while (variant.get_type_string() === 'v')
        variant = variant.get_variant();
    const type = variant.get_type_string();
    switch (type) {
    case 'x': {
        // GJS turns a gint64 into a Number, rounding beyond 2^53.
        const text = variant.print(false);
        const big = BigInt(text);
        const small = Number(big);
        return Number.isSafeInteger(small) ? small : big;
    }
    case 'd':
        return variant.get_double();
    case 's':
        return variant.get_string()[0];
    case 'ay':
        return variant.get_data_as_bytes().toArray();
    }
    if (type.startsWith('m'))
        return variant.n_children() === 0 ? null : valueOf(variant.get_child_value(0));
    return variant.deepUnpack();
}

function rowOf(variant) {
    const row = [];
    for (let i = 0; i < variant.n_children(); i++)
        row.push(valueOf(variant.get_child_value(i)));
    return row;
}

const Database = QStore.Database.prototype;
const Prepared = QStore.PreparedStatement.prototype;
const Result = QStore.Result.prototype;
const Row = QStore.Row.prototype;

const originals = {
    open: QStore.Database.open,
    execute: Database.execute,
    query: Database.query,
    preparedQuery: Prepared.query,
    preparedExecute: Prepared.execute,
    getValue: Result.get_value,
    rowGetValues: Row.get_values,
    rowGetValue: Row.get_value,
};

QStore.Database.open = function (uri, flags = QStore.OpenFlags.NONE) {
    return originals.open.call(this, uri, flags);
};

// Opens the database at @uri, calls @func with it and closes it, also
// when @func throws; returns what @func returned.
QStore.Database.using = function (uri, flagsOrFunc, func) {
    const flags = func === undefined ? QStore.OpenFlags.NONE : flagsOrFunc;
    func ??= flagsOrFunc;
    const db = QStore.Database.open(uri, flags);
    let result;
    try {
        result = func(db);
    } catch (e) {
        try {
            db.close();
        } catch (closeError) {
            // The callback's own error says more than a failed close.
        }
        throw e;
    }
    db.close();
    return result;
};

// Statements query() and execute() keep prepared, as many as Python's
// sqlite3 keeps.
const STATEMENT_CACHE_SIZE = 128;

// The statement @sql, prepared once and kept: a statement holds its
// database weakly, so the two do not keep each other alive.
function preparedOf(db, sql) {
    db._qstoreStatements ??= new Map();
    let statement = db._qstoreStatements.get(sql);
    if (statement === undefined) {
        if (db._qstoreStatements.size >= STATEMENT_CACHE_SIZE)
            db._qstoreStatements.clear();
        statement = db.prepare(sql);
        db._qstoreStatements.set(sql, statement);
    }
    return statement;
}

// Parameters given as a GLib.Variant (or none) go to QStore as they are.
function asVariant(params) {
    return params === null || params === undefined || params instanceof GLib.Variant;
}

// Runs one statement with parameters; returns how many rows it changed.
Database.execute = function (sql, params = []) {
    if (asVariant(params))
        return originals.execute.call(this, sql, params ?? null);
    return preparedOf(this, sql).execute(params);
};

// Runs one statement once per parameter set, prepared once, in a
// transaction; returns how many rows changed in all.
Database.executeMany = function (sql, paramSets) {
    const statement = preparedOf(this, sql);
    return this.transaction(() => {
        let changes = 0;
        for (const params of paramSets)
            changes += statement.execute(params);
        return changes;
    });
};

// Runs one statement and returns its first row (an array of plain
// values), or null when it returned none, as Prepared.queryRow() does.
Database.queryRow = function (sql, params = []) {
    return preparedOf(this, sql).queryRow(params);
};

// Runs one statement; the result's rows are arrays of plain values.
Database.query = function (sql, params = []) {
    if (asVariant(params))
        return originals.query.call(this, sql, params ?? null);
    return preparedOf(this, sql).query(params);
};

// A prepared statement (db.prepare(sql)) binds its parameters with typed
// calls, without a GLib.Variant each.
const binders = [
    (statement, position) => statement.bind_null(position),
    (statement, position, value) => statement.bind_int64(position, value),
    (statement, position, value) => statement.bind_double(position, value),
    (statement, position, value) => statement.bind_text(position, value),
    (statement, position, value) => statement.bind_blob(position, value),
    (statement, position, value) => statement.bind_value(position, value),
];

function bindOne(statement, position, value, where) {
    const [kind, plain] = sqlValue(value, where);
    binders[kind](statement, position, plain);
}

function invalidArgument(message) {
    return new GLib.Error(QStore.Error, QStore.Error.INVALID_ARGUMENT, message);
}

// Binds every parameter from an array (positional) or a plain object
// (named), with the errors of Database.query()'s GVariant parameters.
Prepared.bind = function (params) {
    // A statement's parameters never change: asked once.
    const expected = this._qstoreNParameters ??= this.get_n_parameters();
    if (Array.isArray(params)) {
        if (params.length !== expected) {
            throw invalidArgument(`The statement takes ${expected} parameter${expected === 1 ? '' : 's'} ` +
                                  `but ${params.length} ${params.length === 1 ? 'was' : 'were'} given: ` +
                                  'pass a tuple with one value per parameter');
        }
        // Safe integers go straight to bind_int64(), the others through
        // sqlValue().
        for (let i = 0; i < params.length; i++) {
            const value = params[i];
            if (Number.isSafeInteger(value) && !Object.is(value, -0))
                this.bind_int64(i + 1, value);
            else
                bindOne(this, i + 1, value, `parameter ${i + 1}`);
        }
        return;
    }
    this.clear_bindings();
    if (typeof params !== 'object' || Object.getPrototypeOf(params) !== Object.prototype) {
        throw new TypeError('parameters must be an array (positional) or a plain object ' +
                            `(named), not ${params?.constructor?.name ?? typeof params}`);
    }
    const given = new Map();
    for (const [key, value] of Object.entries(params)) {
        const position = this.get_parameter_position(key);
        if (position === 0) {
            const names = [];
            for (let i = 1; i <= expected; i++)
                names.push(this.get_parameter_name(i) ?? '?');
            throw invalidArgument(`“${key}” is not a parameter of the statement (its ` +
                                  `parameters: ${names.join(', ') || 'none'}): remove it or ` +
                                  'correct its name');
        }
        if (given.has(position)) {
            throw invalidArgument(`Parameter “${this.get_parameter_name(position)}” is given ` +
                                  `twice, as “${given.get(position)}” and as “${key}”: give it once`);
        }
        given.set(position, key);
        bindOne(this, position, value, `parameter “${key}”`);
    }
    for (let position = 1; position <= expected; position++) {
        const name = this.get_parameter_name(position);
        if (name === null) {
            throw invalidArgument(`Parameter ${position} (“?”) is positional, but the parameters ` +
                                  'were given by name: pass a tuple, or name every parameter ' +
                                  '(:name, @name or $name)');
        }
        if (!given.has(position)) {
            throw invalidArgument(`No value for parameter “${name}”: add the key ` +
                                  `“${name.slice(1)}” to the dictionary`);
        }
    }
};

// Runs the statement, first binding @params when given.
Prepared.query = function (params) {
    if (params !== undefined)
        this.bind(params);
    return originals.preparedQuery.call(this);
};

Prepared.execute = function (params) {
    if (params !== undefined)
        this.bind(params);
    return originals.preparedExecute.call(this);
};

// Runs the statement, first binding @params when given, and returns its
// first row as an array of plain values, or null when it returned none.
// The row is read with step() from the statement's own rows, without the
// QStore.Result query() makes: in GJS each object a call returns costs
// more than the statement, so this is the quick way to one row. It leaves
// the statement on that row: step() goes on to the next.
Prepared.queryRow = function (params) {
    if (params !== undefined)
        this.bind(params);
    if (params === undefined || (Array.isArray(params) && params.length === 0))
        this.reset(); // nothing bound, which would have ended a run step() is in
    if (!this.step())
        return null;
    const values = [];
    this.get_row_types().forEach((type, column) => values.push(steppedCellOf(this, column, type)));
    return values;
};

// The catalog entries (QStore.CatalogEntry) of the database.
Database.catalog = function () {
    const model = QStore.catalog_list_entries(this.get_provider());
    const entries = [];
    for (let i = 0; i < model.get_n_items(); i++)
        entries.push(model.get_item(i));
    return entries;
};

// Calls @func between BEGIN and COMMIT, or rolls back and rethrows when
// it throws; nested calls are savepoints of the outer transaction.
// Returns what @func returned.
Database.transaction = function (func) {
    const depth = this._qstoreDepth ?? 0;
    const savepoint = depth > 0 ? `qstore_gjs_${depth}` : null;
    this.exec(savepoint ? `SAVEPOINT ${savepoint}` : 'BEGIN');
    this._qstoreDepth = depth + 1;
    let result;
    try {
        result = func(this);
    } catch (e) {
        this._qstoreDepth = depth;
        this.exec(savepoint ? `ROLLBACK TO ${savepoint}` : 'ROLLBACK');
        if (savepoint)
            this.exec(`RELEASE ${savepoint}`);
        throw e;
    }
    this._qstoreDepth = depth;
    if (savepoint) {
        this.exec(`RELEASE ${savepoint}`);
        return result;
    }
    try {
        this.exec('COMMIT');
    } catch (e) {
        // What did not commit must not linger as an open transaction.
        try {
            this.exec('ROLLBACK');
        } catch (rollbackError) {
            // Nothing was open any more.
        }
        throw e;
    }
    return result;
};

// One value of a result, read with the typed getters: a GLib.Variant
// costs several times the call that reads the value.
function cellOf(result, row, column, type = result.get_value_type(row, column)) {
    switch (type) {
    case QStore.SqlType.INTEGER: {
        // Read as a double, exact below 2^53 (GJS warns on every gint64
        // a Number cannot hold); past that the GVariant keeps every digit.
        const number = result.get_double(row, column);
        return Math.abs(number) < 2 ** 53
            ? number : valueOf(originals.getValue.call(result, row, column));
    }
    case QStore.SqlType.REAL:
        return result.get_double(row, column);
    case QStore.SqlType.TEXT:
        return result.get_text(row, column);
    case QStore.SqlType.BLOB:
        return result.get_blob(row, column).toArray();
    default:
        return null;
    }
}

// One value of the row a statement's step() is on, as cellOf() reads a
// result's.
function steppedCellOf(statement, column, type) {
    switch (type) {
    case QStore.SqlType.INTEGER: {
        const number = statement.get_double(column);
        return Math.abs(number) < 2 ** 53 ? number : valueOf(statement.get_value(column));
    }
    case QStore.SqlType.REAL:
        return statement.get_double(column);
    case QStore.SqlType.TEXT:
        return statement.get_text(column);
    case QStore.SqlType.BLOB:
        return statement.get_blob(column).toArray();
    default:
        return null;
    }
}

// One call for the types of the row's values, then one per value.
Result.get_row = function (row) {
    const values = [];
    this.get_row_types(row).forEach((type, column) => values.push(cellOf(this, row, column, type)));
    return values;
};

Result.get_value = function (row, column) {
    return cellOf(this, row, column);
};

Result.columnNames = function () {
    const names = [];
    for (let i = 0; i < this.get_n_columns(); i++)
        names.push(this.get_column_name(i));
    return names;
};

Result.toArray = function () {
    return Array.from(this);
};

Result[Symbol.iterator] = function* () {
    for (let i = 0; i < this.get_n_rows(); i++)
        yield this.get_row(i);
};

Row.get_values = function () {
    return rowOf(originals.rowGetValues.call(this));
};

Row.get_value = function (column) {
    return valueOf(originals.rowGetValue.call(this, column));
};

Row[Symbol.iterator] = function () {
    return this.get_values()[Symbol.iterator]();
};
