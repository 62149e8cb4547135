/**
 * `npm start` on an embedded SQLite database with no key makes a first key and shows it once,
 * so a new user can call the API right away.
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

/** Starts the service; resolves once it serves, with the plain (non-JSON) lines it printed. */
async function start() {
  const child = spawn(process.execPath, [entryPoint], {
    env: { ...process.env, DATABASE_URL: `sqlite:${path.join(folder, 'tasks.sqlite')}`, PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const printed: string[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.startsWith('{')) printed.push(line);
      else if (JSON.parse(line).msg === 'task-tracker serving') resolve(JSON.parse(line).url);
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code}`)));
  });
  const stop = () => new Promise((resolve) => (child.once('exit', resolve), child.kill('SIGTERM')));
  return { printed, url: url.replace(/\/v1$/, ''), stop };
}

it('shows a working first key on the first start only', async () => {
  const first = await start();
  await first.stop();
  expect(first.printed[0]).toMatch(/No API key existed/);
  const key = first.printed[1];
  expect(key).toMatch(/^tt_[A-Za-z0-9_-]{43}$/);

  const second = await start();
  expect(second.printed).toEqual([]);
  const res = await fetch(`${second.url}/v1/projects`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'first call' }),
  });
  await second.stop();
  expect(res.status).toBe(201);
});
