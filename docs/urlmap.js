// SPDX-License-Identifier: LGPL-2.1-or-later
// Where the reference manuals of the dependencies live.
baseURLs = [
  [ 'GLib', 'https://docs.gtk.org/glib/' ],
  [ 'GObject', 'https://docs.gtk.org/gobject/' ],
  [ 'Gio', 'https://docs.gtk.org/gio/' ],
]
