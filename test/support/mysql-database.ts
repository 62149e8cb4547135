/** A database of its own on a MySQL server, for a test or a benchmark; dropped when done. */
import mysql from 'mysql2/promise';
import type { DatabaseConfig } from '../../src/config';

export interface MysqlDatabase {
  config: DatabaseConfig;
  drop(): Promise<void>;
}

/** A fresh database on the MySQL server: `mysql://root@127.0.0.1:3306/` and a name. */
export async function createMysqlDatabase(serverUrl: string, name: string): Promise<MysqlDatabase> {
  const server = new URL(serverUrl);
  const admin = () =>
    mysql.createConnection({
      host: server.hostname,
      port: Number(server.port || 3306),
      user: decodeURIComponent(server.username),
      password: decodeURIComponent(server.password),
    });
  const connection = await admin();
  await connection.query(`DROP DATABASE IF EXISTS \`${name}\``);
  await connection.query(`CREATE DATABASE \`${name}\``);
  await connection.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    config: { client: 'mysql', url: url.toString() },
    async drop() {
      const c = await admin();
      await c.query(`DROP DATABASE IF EXISTS \`${name}\``);
      await c.end();
    },
  };
}
