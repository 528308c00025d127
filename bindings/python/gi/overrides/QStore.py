# QStore.py: PyGObject overrides for QStore
#
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Refuse strings with an embedded NUL character.

PyGObject hands a Python str to C as a NUL-terminated string, so a name
such as "a\\0b" would silently arrive as "a" and address another store.
Every QStore call that takes a string (store, table and index names,
locations, URIs, options) raises ValueError for such a string instead.
Byte keys and values (bytes) are binary and may hold NUL.
"""

import functools

from gi._gi import FunctionInfo, InterfaceInfo, ObjectInfo, Repository, StructInfo

from ..module import get_introspection_module
from ..overrides import override

QStore = get_introspection_module("QStore")

__all__ = []

# GITypeTag values, stable ABI of GObject introspection.
_TAG_ARRAY = 15
_TAG_UTF8 = 13
_TAG_FILENAME = 14


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


def _refuse_nul(func, where):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        for value in args:
            _check(value, where)
        for value in kwargs.values():
            _check(value, where)
        return func(*args, **kwargs)

    return wrapper


def _override_functions(namespace):
    for info in Repository.get_default().get_infos(namespace):
        if isinstance(info, FunctionInfo) and _takes_strings(info):
            name = info.get_name()
            globals()[name] = _refuse_nul(getattr(QStore, name), "QStore." + name)
            __all__.append(name)


def _override_types(namespace):
    for info in Repository.get_default().get_infos(namespace):
        if not isinstance(info, (ObjectInfo, InterfaceInfo, StructInfo)):
            continue
        checked = [m for m in info.get_methods() if _takes_strings(m)]
        if not checked:
            continue
        type_name = info.get_name()
        base = getattr(QStore, type_name)
        members = {"__module__": __name__}
        for method in checked:
            name = method.get_name()
            wrapper = _refuse_nul(getattr(base, name), "QStore.%s.%s" % (type_name, name))
            members[name] = wrapper if method.is_method() else staticmethod(wrapper)
        globals()[type_name] = override(type(type_name, (base,), members))
        __all__.append(type_name)


_override_functions("QStore")
_override_types("QStore")
