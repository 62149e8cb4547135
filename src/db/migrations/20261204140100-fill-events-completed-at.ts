import type { Knex } from 'knex';

// Events are stored in the newest version's shape: a task event written before 2026-12-15 gets
// its task's `completed_at` as the tasks' migration filled it (its `updated_at` when done, else
// null), added last, as the service writes it. A batch at a time, each its own transaction.
const batch = 500;

export async function up(knex: Knex): Promise<void> {
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
        const data = JSON.parse(row.data) as { object?: Record<string, unknown> };
        const task = data.object;
        if (task === undefined || 'completed_at' in task) continue;
        task.completed_at = task.status === 'done' ? task.updated_at : null;
        await trx('events')
          .where('event_id', row.event_id)
          .update({ data: JSON.stringify(data) });
      }
    });
    after = rows[rows.length - 1].event_id;
  }
}

// 2026-11-28 readers never see the field: the service removes it for them.
export async function down(): Promise<void> {}
