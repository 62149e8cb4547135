/**
 * A table's secondary indexes dropped while a bench fills it in bulk, then rebuilt by a sort: an
 * index whose rows land at random places is written page by page once it outgrows the buffer
 * pool, and the fill waits on the disk. MariaDB only.
 */
import type { Knex } from 'knex';

const showCreate = async (knex: Knex, table: string): Promise<string> =>
  (await knex.raw(`show create table ${table}`))[0][0]['Create Table'];

/**
 * Drops the table's indexes from the first whose definition `first` picks (as SHOW CREATE TABLE
 * writes it: "KEY `name` (`a`,`b`)", "FULLTEXT KEY ..."). A table keeps its indexes in the order
 * they were made (the optimizer meets them in that order), so every index from that one on is
 * dropped and `rebuild` adds them all back in order, from their own definitions, then checks the
 * table is as it was. An index a foreign key needs cannot be dropped: pick one after it.
 */
export async function dropIndexesFrom(
  knex: Knex,
  table: string,
  first: (definition: string) => boolean,
): Promise<{ dropped: string[]; rebuild(): Promise<void> }> {
  const before = await showCreate(knex, table);
  const indexes = before
    .split('\n')
    .map((line) => line.trim().replace(/,$/, ''))
    .filter((line) => /^(FULLTEXT )?KEY /.test(line));
  const from = indexes.findIndex(first);
  const definitions = from < 0 ? [] : indexes.slice(from);
  const names = definitions.map((definition) => /KEY (`\w+`)/.exec(definition)![1]);
  if (names.length > 0)
    await knex.raw(`alter table ${table} ${names.map((name) => `drop index ${name}`).join(', ')}`);
  return {
    dropped: names,
    async rebuild() {
      // One FULLTEXT index at a time: InnoDB builds no more in one ALTER. With FORCE, as the
      // table keeps the hidden FTS_DOC_ID of the one dropped, and MariaDB 10.11 then adds the
      // index in place without the rows already there (a search finds none of them); a rebuild
      // of the table indexes every row.
      const fulltext = definitions.filter((definition) => definition.startsWith('FULLTEXT'));
      const plain = definitions.filter((definition) => !definition.startsWith('FULLTEXT'));
      if (plain.length > 0)
        await knex.raw(
          `alter table ${table} ${plain.map((definition) => `add ${definition}`).join(', ')}`,
        );
      for (const definition of fulltext)
        await knex.raw(`alter table ${table} add ${definition}, force`);
      const after = await showCreate(knex, table);
      if (after !== before)
        throw new Error(`${table} differs from what it was before the fill:\n${after}`);
    },
  };
}
