import type { Knex } from 'knex';

// On MySQL every table after this one is created in utf8mb4 (any Unicode, emoji included),
// compared byte for byte. SQLite stores UTF-8 text as it is and needs nothing.
export async function up(knex: Knex): Promise<void> {
  if (knex.client.config.client === 'mysql2') {
    await knex.raw('ALTER DATABASE CHARACTER SET utf8mb4 COLLATE utf8mb4_bin');
  }
}

export async function down(): Promise<void> {
  // The database's earlier defaults are not recorded; tables made since stay utf8mb4.
}
