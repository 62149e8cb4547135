/**
 * `npm start` on an embedded SQLite database with no key makes a first key, so a new user can
 * call the API right away, and never puts it in the log: with standard output a pipe (a log
 * collector) the key goes to a file only its owner may read; on a terminal it is shown once.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { projectRoot } from '../../src/paths';

const entryPoint = path.join(projectRoot, 'dist', 'src', 'cli', 'serve.js');
const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'tt-first-key-'));
afterAll(() => fs.rmSync(folder, { recursive: true, force: true }));

const apiKey = /tt_[A-Za-z0-9_-]{43}/;

/**
 * Starts the service on its own database file; resolves once it serves, with everything it
 * wrote to standard output. `onTerminal` runs it under `script`, which gives it a terminal.
 */
async function start(database: string, options: { onTerminal?: boolean } = {}) {
  const env = { ...process.env, DATABASE_URL: `sqlite:${database}`, PORT: '0' };
  // script's own stderr only says that it stops; the service's goes through the terminal.
  const child = options.onTerminal
    ? spawn('script', ['-qec', `'${process.execPath}' '${entryPoint}'`, '/dev/null'], {
        env,
        stdio: ['pipe', 'pipe', 'ignore'],
      })
    : spawn(process.execPath, [entryPoint], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const lines: string[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line.trim());
      if (line.trim().startsWith('{') && JSON.parse(line).msg === 'task-tracker serving')
        resolve(JSON.parse(line).url);
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code}`)));
  });
  const stop = () => new Promise((resolve) => (child.once('exit', resolve), child.kill('SIGTERM')));
  return { lines, url: url.replace(/\/v1$/, ''), stop };
}

it('writes a working first key to a file only its owner may read, never to the log, on the first start only', async () => {
  const database = path.join(folder, 'piped', 'tasks.sqlite');
  const first = await start(database);
  await first.stop();
  const keyFile = path.join(path.dirname(database), 'first-api-key.txt');
  expect(first.lines.filter((line) => apiKey.test(line))).toEqual([]);
  expect(first.lines.map((line) => JSON.parse(line).file).filter(Boolean)).toEqual([keyFile]);
  expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600);
  const key = fs.readFileSync(keyFile, 'utf8').trim();
  expect(key).toMatch(new RegExp(`^${apiKey.source}$`));

  const second = await start(database);
  expect(second.lines.some((line) => JSON.parse(line).file !== undefined)).toBe(false);
  const res = await fetch(`${second.url}/v1/projects`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'first call' }),
  });
  await second.stop();
  expect(res.status).toBe(201);
});

it('shows the first key once on a terminal, and writes no file', async () => {
  const database = path.join(folder, 'terminal', 'tasks.sqlite');
  const first = await start(database, { onTerminal: true });
  await first.stop();
  const shown = first.lines.findIndex((line) => /No API key existed/.test(line));
  expect(first.lines[shown + 1]).toMatch(new RegExp(`^${apiKey.source}$`));
  expect(fs.existsSync(path.join(path.dirname(database), 'first-api-key.txt'))).toBe(false);
});
