/* qstore-version-macros.h: symbol visibility and availability
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

#include <glib.h>

#ifndef _QSTORE_EXTERN
# define _QSTORE_EXTERN __attribute__((visibility("default"))) extern
#endif

#define QSTORE_AVAILABLE_IN_ALL _QSTORE_EXTERN
#define QSTORE_AVAILABLE_IN_1_0 _QSTORE_EXTERN
