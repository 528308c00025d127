# QStore.py: PyGObject overrides for QStore
#
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Python conveniences over the QStore typelib.

SQL the way Python's sqlite3 module is used::

    with QStore.Database.open("lmdb:/tmp/shop") as db:       # closes at the end
        db.execute("CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT, price REAL)")
        db.execute("INSERT INTO item (name, price) VALUES (?, ?)", ("pear", 0.5))
        db.execute("UPDATE item SET price = :p WHERE name = :n", {"p": 0.4, "n": "pear"})
        with db.transaction():                                # commits, or rolls back
            db.execute("DELETE FROM item WHERE price > ?", (1,))
        for name, price in db.query("SELECT name, price FROM item"):
            print(name, price)
        tables = [e.get_name() for e in db.catalog()]

query(), execute() and executemany() keep the statements they run
prepared (the last 128 texts, as Python's sqlite3 does) and bind their
parameters with typed calls, without a GLib.Variant each. db.prepare(sql)
gives such a statement to hold::

        lookup = db.prepare("SELECT price FROM item WHERE name = ?")
        for name in names:
            print(lookup.query((name,))[0])

query_row() gives the first row alone (a tuple, or None), read without
making a QStore.Result: the quicker way to one row::

        (price,) = db.query_row("SELECT price FROM item WHERE id = ?", (7,))

Parameters are a tuple or list (positional: ``?``, ``?NNN``) or a dict
(named: ``:name``, ``@name``, ``$name``, keyed without the prefix) of
plain values: None (NULL), bool, int (64 bits), float, str, bytes (BLOB),
or a GLib.Variant. Rows are tuples of plain values: iterating a result,
indexing it and Result.get_row() all give the same tuples; a QStore.Row
(what a Gtk.ColumnView shows) unpacks the same way.

Errors: every QStore call that fails raises a subclass of GLib.Error, one
per QStore.Error code, carrying the code as a QStore.Error value::

    try:
        db.execute("INSERT INTO item (id) VALUES (1)")
    except QStore.ConstraintError as e:       # or: except GLib.Error as e:
        assert e.code == QStore.Error.CONSTRAINT
        assert e.matches(QStore.error_quark(), QStore.Error.CONSTRAINT)

QStore.DatabaseError is their common base.

Strings: PyGObject hands a Python str to C as a NUL-terminated string, so
a name such as "a\\0b" would silently arrive as "a" and address another
store. Every QStore call that takes a string (store, table and index
names, locations, URIs, options, SQL) raises ValueError for such a
string instead. Byte keys and values (bytes) are binary and may hold NUL.
"""

import collections.abc
import functools

from gi._gi import FunctionInfo, InterfaceInfo, ObjectInfo, Repository, StructInfo
from gi.repository import GLib

from ..module import get_introspection_module
from ..overrides import override

QStore = get_introspection_module("QStore")

__all__ = []

# GITypeTag values, stable ABI of GObject introspection.
_TAG_ARRAY = 15
_TAG_UTF8 = 13
_TAG_FILENAME = 14

# Statements Database.query() and execute() keep prepared, as many as
# Python's sqlite3 keeps by default.
_STATEMENT_CACHE_SIZE = 128

_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1


# Errors

class DatabaseError(GLib.Error):
    """A failure reported by QStore: the base of one class per QStore.Error
    code. ``code`` is the QStore.Error value, ``message`` says what failed
    and what to do."""

    def __repr__(self):
        return "QStore.%s(%r)" % (type(self).__name__, self.message)


def _error_class_name(nick):
    words = [w.upper() if w == "io" else w.capitalize() for w in nick.split("-")]
    return "".join(words) + "Error"


_ERROR_CLASSES = {}
for _code, _member in sorted(QStore.Error.__enum_values__.items()):
    _name = _error_class_name(_member.value_nick)
    _cls = type(_name, (DatabaseError,), {
        "__module__": __name__,
        "__doc__": "QStore.Error.%s, raised as an exception." % _member.value_name[13:],
    })
    _ERROR_CLASSES[_code] = _cls
    globals()[_name] = _cls
    __all__.append(_name)
__all__.append("DatabaseError")

_ERROR_DOMAIN = GLib.quark_to_string(QStore.error_quark())


def _converted(error):
    """The exception to raise for @error: a QStore one becomes the class of
    its code."""
    if error.domain != _ERROR_DOMAIN or error.code not in _ERROR_CLASSES:
        return error
    return _ERROR_CLASSES[error.code](error.message, error.domain, QStore.Error(error.code))


def _raise_converted(error):
    raise _converted(error).with_traceback(error.__traceback__) from None


# Strings with NUL

def _takes_strings(info):
    for arg in info.get_arguments():
        type_info = arg.get_type()
        tag = type_info.get_tag()
        if tag in (_TAG_UTF8, _TAG_FILENAME):
            return True
        if tag == _TAG_ARRAY and type_info.get_param_type(0).get_tag() in (_TAG_UTF8, _TAG_FILENAME):
            return True
    return False


def _check(value, where):
    if isinstance(value, str):
        if "\0" in value:
            raise ValueError("%s: %r holds a NUL character, which qstore names, "
                             "locations and options cannot hold" % (where, value))
    elif isinstance(value, (list, tuple)):
        for item in value:
            _check(item, where)


def _wrap(func, where, strings, throws):
    """@func with its string arguments checked (@strings) and its errors
    converted (@throws)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if strings:
            for value in args:
                _check(value, where)
            for value in kwargs.values():
                _check(value, where)
        try:
            return func(*args, **kwargs)
        except GLib.Error as error:
            if not throws:
                raise
            _raise_converted(error)

    return wrapper


def _needs_wrapper(info):
    return _takes_strings(info), info.can_throw_gerror()


# Values

# What SQL holds, as _sql_value() tells it.
_NULL, _INTEGER, _REAL, _TEXT, _BLOB, _VARIANT = range(6)


def _sql_value(value, where):
    """@value as (kind, plain value) for a parameter; @where() names it in
    errors. The common types are tested first, by identity: this runs per
    parameter of every statement."""
    kind = type(value)
    if kind is int:
        if not _INT64_MIN <= value <= _INT64_MAX:
            raise OverflowError("%s: %d does not fit in 64 signed bits; pass it as a float "
                                "or a str" % (where(), value))
        return _INTEGER, value
    if kind is str:
        if "\0" in value:
            raise ValueError("%s: the str holds a NUL character, which GLib strings cannot "
                             "carry; pass the bytes and write CAST(? AS TEXT) in the SQL"
                             % where())
        return _TEXT, value
    if kind is float:
        return _REAL, value
    if value is None:
        return _NULL, None
    if isinstance(value, GLib.Variant):
        return _VARIANT, value
    # SQLite has no booleans: TRUE and FALSE are 1 and 0.
    if isinstance(value, bool):
        return _INTEGER, int(value)
    for plain in (int, float, str):
        if isinstance(value, plain):
            return _sql_value(plain(value), where)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _BLOB, bytes(value)
    raise TypeError("%s: a %s cannot be stored; use None, bool, int, float, str, bytes "
                    "or a GLib.Variant" % (where(), kind.__name__))


def _not_utf8(where, error):
    return ValueError("%s: the str cannot be encoded as UTF-8 (%s); pass bytes instead"
                      % (where(), error.reason))


def _check_sequence(params):
    kind = type(params)
    if kind is tuple or kind is list:
        return
    if isinstance(params, (str, bytes, bytearray)) or \
            not isinstance(params, collections.abc.Sequence):
        raise TypeError("parameters must be a tuple or list (positional) or a dict (named), "
                        "not %s" % type(params).__name__)


_GETTERS = {
    "x": GLib.Variant.get_int64,
    "s": GLib.Variant.get_string,
    "d": GLib.Variant.get_double,
}


def _value_of(variant):
    """A result value (possibly boxed in `v`) as a plain Python value."""
    kind = variant.get_type_string()
    while kind == "v":
        variant = variant.get_variant()
        kind = variant.get_type_string()
    getter = _GETTERS.get(kind)
    if getter is not None:
        return getter(variant)
    if kind == "ay":
        return bytes(variant.get_data_as_bytes().get_data() or b"")
    if kind.startswith("m"):
        return None if variant.n_children() == 0 else _value_of(variant.get_child_value(0))
    return variant.unpack()


def _row_of(variant):
    """A row (a tuple of `v`) as a tuple of plain Python values."""
    return tuple([_value_of(variant.get_child_value(i)) for i in range(variant.n_children())])


# The types

def _auto_members(info, base):
    """Every method of @info that takes strings or throws, wrapped."""
    members = {"__module__": __name__}
    for method in info.get_methods():
        strings, throws = _needs_wrapper(method)
        if not (strings or throws):
            continue
        name = method.get_name()
        wrapper = _wrap(getattr(base, name), "QStore.%s.%s" % (info.get_name(), name),
                        strings, throws)
        members[name] = wrapper if method.is_method() else staticmethod(wrapper)
    return members


def _auto_class(info):
    base = getattr(QStore, info.get_name())
    return type(info.get_name(), (base,), _auto_members(info, base))


def _info(name):
    return Repository.get_default().find_by_name("QStore", name)


_Database = _auto_class(_info("Database"))
_Result = _auto_class(_info("Result"))
_Row = _auto_class(_info("Row"))
_Prepared = _auto_class(_info("PreparedStatement"))


def _invalid_argument(message):
    code = QStore.Error.INVALID_ARGUMENT
    return _ERROR_CLASSES[int(code)](message, _ERROR_DOMAIN, code)


_bind_int64 = QStore.PreparedStatement.bind_int64
_bind_double = QStore.PreparedStatement.bind_double

# The typed binds, called unwrapped: parameters are checked before.
_BINDERS = {
    _NULL: lambda stmt, position, value: QStore.PreparedStatement.bind_null(stmt, position),
    _INTEGER: QStore.PreparedStatement.bind_int64,
    _REAL: QStore.PreparedStatement.bind_double,
    _TEXT: QStore.PreparedStatement.bind_text,
    _BLOB: lambda stmt, position, value:
        QStore.PreparedStatement.bind_blob(stmt, position, GLib.Bytes.new(value)),
    _VARIANT: QStore.PreparedStatement.bind_value,
}


# What every run calls, looked up once.
_query = QStore.PreparedStatement.query
_execute = QStore.PreparedStatement.execute
_step = QStore.PreparedStatement.step
_reset = QStore.PreparedStatement.reset
_stepped_row_types = QStore.PreparedStatement.get_row_types


def _stepped_blob(statement, column):
    return bytes(QStore.PreparedStatement.get_blob(statement, column).get_data() or b"")


# The getters of the row step() is on, one per QStore.SqlType, as
# _GETTERS_BY_TYPE below reads a result's.
_STEPPED_GETTERS_BY_TYPE = (
    lambda statement, column: None,           # NULL
    QStore.PreparedStatement.get_int64,
    QStore.PreparedStatement.get_double,
    QStore.PreparedStatement.get_text,
    _stepped_blob,
)


class PreparedStatement(_Prepared):
    """A statement read once by Database.prepare() and run again and
    again. query() and execute() take parameters as Database.query()
    does (which runs its statements this way too), and bind them without
    making a GLib.Variant of each."""

    def bind(self, params):
        """Binds every parameter from a tuple or list (positional) or a
        dict (named), as Database.query() takes them and with the same
        errors."""
        try:
            kind = type(params)
            if kind is not tuple and kind is not list and \
                    isinstance(params, collections.abc.Mapping):
                self.clear_bindings()
                self._bind_named(params)
            else:
                self._bind_positional(params)
        except GLib.Error as error:
            _raise_converted(error)

    def _bind_positional(self, params):
        _check_sequence(params)
        # A statement's parameters never change: asked once.
        expected = self.__dict__.get("_qstore_n_parameters")
        if expected is None:
            expected = self._qstore_n_parameters = _Prepared.get_n_parameters(self)
        if len(params) != expected:
            raise _invalid_argument(
                "The statement takes %d parameter%s but %d %s given: pass a tuple with "
                "one value per parameter" % (expected, "" if expected == 1 else "s",
                                             len(params), "was" if len(params) == 1 else "were"))
        # Every position is bound again: nothing to clear. Integers in
        # range and reals, which need no other check, go straight to their
        # typed bind; the others through _bind().
        position = 0
        for value in params:
            position += 1
            kind = type(value)
            if kind is int and _INT64_MIN <= value <= _INT64_MAX:
                _bind_int64(self, position, value)
            elif kind is float:
                _bind_double(self, position, value)
            else:
                self._bind(position, value, functools.partial("parameter %d".__mod__, position))

    def _bind(self, position, value, where):
        kind, plain = _sql_value(value, where)
        try:
            _BINDERS[kind](self, position, plain)
        except UnicodeEncodeError as e:
            raise _not_utf8(where, e) from None

    def _bind_named(self, params):
        given = {}
        for key, value in params.items():
            if not isinstance(key, str):
                raise TypeError("parameter names must be str, not %s" % type(key).__name__)
            position = self.get_parameter_position(key)
            if position == 0:
                names = [self.get_parameter_name(i) or "?"
                         for i in range(1, self.get_n_parameters() + 1)]
                raise _invalid_argument(
                    "“%s” is not a parameter of the statement (its parameters: %s): remove "
                    "it or correct its name" % (key, ", ".join(names) or "none"))
            if position in given:
                raise _invalid_argument(
                    "Parameter “%s” is given twice, as “%s” and as “%s”: give it once"
                    % (self.get_parameter_name(position), given[position], key))
            given[position] = key
            self._bind(position, value, lambda: "parameter %r" % key)
        for position in range(1, self.get_n_parameters() + 1):
            name = self.get_parameter_name(position)
            if name is None:
                raise _invalid_argument(
                    "Parameter %d (“?”) is positional, but the parameters were given by name: pass "
                    "a tuple, or name every parameter (:name, @name or $name)" % position)
            if position not in given:
                raise _invalid_argument("No value for parameter “%s”: add the key “%s” to the "
                                        "dictionary" % (name, name[1:]))

    # Unwrapped: the statement's text was checked when it was prepared.
    def query(self, params=None):
        """Runs the statement, first binding @params when given; returns
        its QStore.Result."""
        if params is not None:
            self.bind(params)
        try:
            return _query(self)
        except GLib.Error as error:
            _raise_converted(error)

    def execute(self, params=None):
        """Runs the statement, first binding @params when given; returns
        how many rows it changed."""
        if params is not None:
            self.bind(params)
        try:
            return _execute(self)
        except GLib.Error as error:
            _raise_converted(error)

    def query_row(self, params=None):
        """Runs the statement, first binding @params when given, and
        returns its first row as a tuple, or None when it returned none.
        The row is read with step() from the statement's own rows, without
        the QStore.Result query() makes: the quicker way to one row. As
        sqlite3's fetchone() leaves its cursor, it leaves the statement on
        that row: step() goes on to the next."""
        if params is not None:
            self.bind(params)
        if not params:
            # Nothing was bound, which would have ended a run step() is in.
            _reset(self)
        try:
            if not _step(self):
                return None
        except GLib.Error as error:
            _raise_converted(error)
        return tuple([_STEPPED_GETTERS_BY_TYPE[kind](self, column)
                      for column, kind in enumerate(_stepped_row_types(self))])


class _Transaction:
    """`with db.transaction():` — BEGIN … COMMIT, or ROLLBACK when the
    block raises. Nested blocks are savepoints of the outer one."""

    def __init__(self, db):
        self._db = db
        self._savepoint = None

    def __enter__(self):
        depth = self._db._qstore_depth
        if depth == 0:
            self._db.exec("BEGIN")
        else:
            self._savepoint = "qstore_python_%d" % depth
            self._db.exec("SAVEPOINT " + self._savepoint)
        self._db._qstore_depth = depth + 1
        return self._db

    def __exit__(self, exc_type, exc, tb):
        self._db._qstore_depth -= 1
        if self._savepoint is not None:
            if exc_type is not None:
                self._db.exec("ROLLBACK TO %s" % self._savepoint)
            self._db.exec("RELEASE %s" % self._savepoint)
            return False
        if exc_type is not None:
            self._db.exec("ROLLBACK")
            return False
        try:
            self._db.exec("COMMIT")
        except GLib.Error:
            # What did not commit must not linger as an open transaction.
            try:
                self._db.exec("ROLLBACK")
            except GLib.Error:
                pass
            raise
        return False


class Database(_Database):
    """A store opened as an SQL database; also a context manager that
    closes it."""

    _qstore_depth = 0

    @staticmethod
    def open(uri, flags=QStore.OpenFlags.NONE):
        return _Database.open(uri, flags)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            self.close()
        except GLib.Error:
            # The block's own exception says more than a failed close.
            if exc_type is None:
                raise
        return False

    def _prepared(self, sql):
        """The statement @sql, prepared once and kept, as Python's sqlite3
        keeps them: a statement holds its database weakly, so the two do
        not keep each other alive."""
        cache = self.__dict__.setdefault("_qstore_statements", {})
        statement = cache.get(sql)
        if statement is None:
            if len(cache) >= _STATEMENT_CACHE_SIZE:
                cache.clear()
            statement = cache[sql] = self.prepare(sql)
        return statement

    def execute(self, sql, params=()):
        """Runs one statement with parameters; returns how many rows it
        changed."""
        if params is None or isinstance(params, GLib.Variant):
            return _Database.execute(self, sql, params)
        return self._prepared(sql).execute(params)

    def executemany(self, sql, seq_of_params):
        """Runs one statement once per parameter set, in a transaction when
        none is open; returns how many rows changed in all."""
        statement = self._prepared(sql)
        with self.transaction():
            return sum(statement.execute(params) for params in seq_of_params)

    def query(self, sql, params=()):
        """Runs one statement and returns its QStore.Result, whose rows are
        tuples of plain values."""
        if params is None or isinstance(params, GLib.Variant):
            return _Database.query(self, sql, params)
        return self._prepared(sql).query(params)

    def query_row(self, sql, params=()):
        """Runs one statement and returns its first row as a tuple, or None
        when it returned none, as PreparedStatement.query_row() does."""
        return self._prepared(sql).query_row(params)

    def catalog(self):
        """The catalog entries (QStore.CatalogEntry) of the database."""
        model = QStore.catalog_list_entries(self.get_provider())
        return [model.get_item(i) for i in range(model.get_n_items())]

    def transaction(self):
        """A context manager: BEGIN on entry, COMMIT on a normal exit,
        ROLLBACK when the block raises (nested ones are savepoints)."""
        return _Transaction(self)


def _blob_of(result, row, column):
    return bytes(_Result.get_blob(result, row, column).get_data() or b"")


# Values are read with the typed getters, not as GVariants: a GLib.Variant
# costs several times the call that reads the value. One getter per
# QStore.SqlType, in the order of its values.
_row_types = _Result.get_row_types
_GETTERS_BY_TYPE = (
    lambda result, row, column: None,           # NULL
    _Result.get_int64,
    _Result.get_double,
    _Result.get_text,
    _blob_of,
)


def _cell(result, row, column):
    # The row's types come as bytes, cheaper than one value's enum.
    return _GETTERS_BY_TYPE[_row_types(result, row)[column]](result, row, column)


def _row(result, row):
    """A row, with one call for the types of its values and one per value."""
    return tuple([_GETTERS_BY_TYPE[kind](result, row, column)
                  for column, kind in enumerate(_row_types(result, row))])


class Result(_Result):
    """The rows of a statement: a sequence of tuples of plain values."""

    def get_row(self, row):
        return _row(self, row)

    def get_value(self, row, column):
        return _cell(self, row, column)

    @property
    def column_names(self):
        return tuple(self.get_column_name(i) for i in range(self.get_n_columns()))

    def fetchall(self):
        return list(self)

    def __len__(self):
        return self.get_n_rows()

    def __iter__(self):
        for row in range(self.get_n_rows()):
            yield _row(self, row)

    def __getitem__(self, key):
        if isinstance(key, slice):
            return [self.get_row(i) for i in range(*key.indices(len(self)))]
        if key < 0:
            key += len(self)
        if not 0 <= key < len(self):
            raise IndexError("row %d of a result of %d rows" % (key, len(self)))
        return self.get_row(key)


class Row(_Row):
    """One row of a result, unpacking as a tuple of plain values."""

    def get_values(self):
        return _row_of(_Row.get_values(self))

    def get_value(self, column):
        return _value_of(_Row.get_value(self, column))

    def __len__(self):
        return _Row.get_values(self).n_children()

    def __iter__(self):
        return iter(self.get_values())

    def __getitem__(self, key):
        return self.get_values()[key]


_HANDWRITTEN = {"Database": Database, "PreparedStatement": PreparedStatement,
                "Result": Result, "Row": Row}


def _override_functions(namespace):
    for info in Repository.get_default().get_infos(namespace):
        if not isinstance(info, FunctionInfo):
            continue
        strings, throws = _needs_wrapper(info)
        if strings or throws:
            name = info.get_name()
            globals()[name] = _wrap(getattr(QStore, name), "QStore." + name, strings, throws)
            __all__.append(name)


def _override_types(namespace):
    for info in Repository.get_default().get_infos(namespace):
        if not isinstance(info, (ObjectInfo, InterfaceInfo, StructInfo)):
            continue
        type_name = info.get_name()
        if type_name in _HANDWRITTEN:
            cls = _HANDWRITTEN[type_name]
        elif any(any(_needs_wrapper(m)) for m in info.get_methods()):
            cls = _auto_class(info)
        else:
            continue
        globals()[type_name] = override(cls)
        __all__.append(type_name)


_override_functions("QStore")
_override_types("QStore")
