/* qstore-coordinator-savepoint.c: savepoint levels
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-coordinator-private.h"

/* A level is the state a savepoint can go back to: the pending buffer's
 * mark, how many changes were recorded, and the row-count delta of every
 * table the transaction had touched. Rolling back to it undoes all three;
 * tables touched after it leave the transaction. */

void
qstore_coordinator_level_clear (gpointer data)
{
  Level *level = data;

  g_clear_pointer (&level->deltas, g_free);
}

static void
push_level (QStoreCoordinator *self)
{
  Level level;

  level.mark = qstore_pending_mark (self->pending);
  level.n_changes = self->changes->len;
  level.n_tx_tables = self->tx_tables->len;
  level.deltas = g_new (gint64, MAX (level.n_tx_tables, 1));
  for (guint i = 0; i < level.n_tx_tables; i++)
    level.deltas[i] = ((TableEntry *) self->tx_tables->pdata[i])->delta;
  g_array_append_val (self->levels, level);
  qstore_pending_set_undo (self->pending, TRUE);
}

static void
truncate_levels (QStoreCoordinator *self,
                 guint              n_levels)
{
  if (n_levels < self->levels->len)
    g_array_set_size (self->levels, n_levels);
  qstore_pending_set_undo (self->pending, self->levels->len > 0);
}

static void
forget_tx_tables_from (QStoreCoordinator *self,
                       guint              n_tables)
{
  for (guint i = n_tables; i < self->tx_tables->len; i++)
    {
      TableEntry *entry = self->tx_tables->pdata[i];

      entry->delta = 0;
      entry->in_tx = FALSE;
    }
  if (n_tables < self->tx_tables->len)
    g_ptr_array_set_size (self->tx_tables, n_tables);
}

/**
 * qstore_coordinator_savepoint:
 * @self: a #QStoreCoordinator
 * @depth: the savepoint's depth, from 0
 *
 * Opens savepoint levels up to @depth at the current state, as SQLite's
 * `xSavepoint` asks. A level already open is kept where it is: a table
 * that joins the transaction late announces the current depth again, and
 * that must not move the level's mark. Outside a transaction, nothing
 * happens.
 */
void
qstore_coordinator_savepoint (QStoreCoordinator *self,
                              int                depth)
{
  g_return_if_fail (QSTORE_IS_COORDINATOR (self));

  if (!self->in_tx || depth < 0)
    return;
  while ((int) self->levels->len <= depth)
    push_level (self);
}

/**
 * qstore_coordinator_release:
 * @self: a #QStoreCoordinator
 * @depth: the savepoint's depth
 *
 * Releases savepoint levels @depth and above, as SQLite's `xRelease` asks:
 * what they hold now belongs to the level below (or to the transaction).
 * Outside a transaction, nothing happens.
 */
void
qstore_coordinator_release (QStoreCoordinator *self,
                            int                depth)
{
  g_return_if_fail (QSTORE_IS_COORDINATOR (self));

  if (!self->in_tx)
    return;
  truncate_levels (self, MAX (depth, 0));
  /* A large statement ended: what it wrote may go out now. */
  if (self->levels->len == 0)
    qstore_coordinator_try_spill (self);
}

/**
 * qstore_coordinator_rollback_to:
 * @self: a #QStoreCoordinator
 * @depth: the savepoint's depth, or -1
 *
 * Undoes everything written, recorded and counted after savepoint level
 * @depth was opened, as SQLite's `xRollbackTo` asks. Level @depth stays
 * open; the levels above it are gone.
 *
 * A negative @depth, or a level that was never opened, means the state at
 * [method@Coordinator.begin]: SQLite sends `xRollbackTo(-1)` for
 * `ROLLBACK TO` a savepoint that opened the transaction, and a table that
 * joined late may be asked to roll back to a level it never saw. The
 * transaction stays open either way. Outside a transaction, nothing
 * happens.
 */
void
qstore_coordinator_rollback_to (QStoreCoordinator *self,
                                int                depth)
{
  Level *level;

  g_return_if_fail (QSTORE_IS_COORDINATOR (self));

  if (!self->in_tx)
    return;

  self->epoch++;

  if (depth < 0 || depth >= (int) self->levels->len)
    {
      qstore_pending_reset (self->pending);
      qstore_coordinator_spill_abort (self);
      g_array_set_size (self->changes, 0);
      forget_tx_tables_from (self, 0);
      truncate_levels (self, 0);
      /* The levels up to @depth stay open, now all at the beginning. */
      qstore_coordinator_savepoint (self, depth);
      if (G_UNLIKELY (self->observer != NULL) && self->observer->undone != NULL)
        self->observer->undone (self->observer_data);
      return;
    }

  level = &g_array_index (self->levels, Level, depth);
  qstore_pending_undo_to (self->pending, level->mark);
  g_array_set_size (self->changes, level->n_changes);
  for (guint i = 0; i < level->n_tx_tables; i++)
    ((TableEntry *) self->tx_tables->pdata[i])->delta = level->deltas[i];
  forget_tx_tables_from (self, level->n_tx_tables);
  truncate_levels (self, depth + 1);
  /* The state is the mark's again; later rollbacks need only walk what
   * comes after this point. */
  level = &g_array_index (self->levels, Level, depth);
  level->mark = qstore_pending_mark (self->pending);
  if (G_UNLIKELY (self->observer != NULL) && self->observer->undone != NULL)
    self->observer->undone (self->observer_data);
}
