/**
 * `npm start` with a MySQL DATABASE_URL that names a database the server does not have: one
 * line saying to create it, and no stack trace on either stream.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { projectRoot } from '../../src/paths';

const serverUrl = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/';

test('a database that does not exist is one line saying to create it', async () => {
  const url = new URL(serverUrl);
  url.pathname = '/tt_never_created';
  const child = spawn(
    process.execPath,
    [path.join(projectRoot, 'dist', 'src', 'cli', 'serve.js')],
    {
      env: { ...process.env, DATABASE_URL: url.toString(), PORT: '0', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const code = await new Promise((resolve) => child.once('exit', resolve));
  expect(code).toBe(1);
  expect(stderr.trim().split('\n')).toEqual([
    'the database tt_never_created that DATABASE_URL names does not exist on its server: create it (CREATE DATABASE `tt_never_created`), then start again; the service makes its tables itself',
  ]);
  expect(stdout).not.toMatch(/\n\s+at /);
});
