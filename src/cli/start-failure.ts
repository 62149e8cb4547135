/** What a person can act on, in one line, for the failures a start commonly meets (`npm start`, the sandbox). */
import { ConfigError } from '../config';

export function describeStartFailure(error: unknown): unknown {
  if (error instanceof ConfigError) return `configuration error: ${error.message}`;
  const { code, address, port, sqlMessage } = (error ?? {}) as {
    code?: string;
    address?: string;
    port?: number;
    sqlMessage?: string;
  };
  if (code === 'EADDRINUSE')
    return `cannot listen on ${address}:${port}: the port is in use (set PORT to another port, or stop what holds it)`;
  if (code === 'EADDRNOTAVAIL')
    return `cannot listen on ${address}: no interface of this machine has that address (set HOST)`;
  if (code === 'EACCES')
    return `cannot listen on ${address}:${port}: permission denied (set PORT to 1024 or above)`;
  if (code === 'ER_BAD_DB_ERROR') {
    const name = /'(.*)'/.exec(sqlMessage ?? '')?.[1] ?? '';
    return `the database ${name} that DATABASE_URL names does not exist on its server: create it (CREATE DATABASE \`${name}\`), then start again; the service makes its tables itself`;
  }
  return error;
}
