import type { Knex } from 'knex';

/** A task as a stored event's `data.object` holds it. */
type StoredTask = Record<string, unknown>;

/**
 * Brings every stored task event's task into a newer version's shape, for a migration: `fill`
 * changes it in place and answers whether it did. Events are stored in the newest version's
 * shape, so one written before a version gets the fields that version added, as its migration
 * filled the rows. A batch at a time, each its own transaction.
 */
export async function fillStoredTasks(
  knex: Knex,
  fill: (task: StoredTask) => boolean,
  batch = 500,
): Promise<void> {
  let after = '';
  for (;;) {
    const rows: { event_id: string; data: string }[] = await knex('events')
      .select('event_id', 'data')
      .where('type', 'like', 'task.%')
      .andWhere('event_id', '>', after)
      .orderBy('event_id')
      .limit(batch);
    if (rows.length === 0) return;
    await knex.transaction(async (trx) => {
      for (const row of rows) {
        const data = JSON.parse(row.data) as { object?: StoredTask };
        if (data.object === undefined || !fill(data.object)) continue;
        await trx('events')
          .where('event_id', row.event_id)
          .update({ data: JSON.stringify(data) });
      }
    });
    after = rows[rows.length - 1].event_id;
  }
}
