/**
 * A first request with an Idempotency-Key that is still running, as the service sees one: a
 * connection of the test's own, in a transaction that has bound the key and not committed.
 */
import type { Knex } from 'knex';
import mysql from 'mysql2/promise';

export async function holdIdempotencyKey(
  knex: Knex,
  tenantName: string,
  idempotencyKey: string,
): Promise<mysql.Connection> {
  const { tenant_id: tenantId } = await knex('tenants')
    .first('tenant_id')
    .where('name', tenantName);
  const { host, port, user, database } = knex.client.config.connection as {
    host: string;
    port: number;
    user: string;
    database: string;
  };
  const connection = await mysql.createConnection({ host, port, user, database });
  await connection.query('BEGIN');
  await connection.query(
    "INSERT INTO idempotency_keys (tenant_id, idempotency_key, fingerprint, created_at, response_status, response_headers, response_body) VALUES (?, ?, ?, '2026-11-23 00:00:00.000', 201, '{}', '{}')",
    [tenantId, idempotencyKey, '0'.repeat(64)],
  );
  return connection;
}
