/**
 * `npm start` and the sandbox when they cannot serve: a port already in use is one line that
 * names the port and what to set, not a stack trace, and the process exits non-zero. `--help`
 * lists every variable the configuration table has.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { processVariables, variables } from '../../src/config';
import { projectRoot } from '../../src/paths';

const entryPoint = path.join(projectRoot, 'dist', 'src', 'cli', 'serve.js');
const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'tt-serve-'));
afterAll(() => fs.rmSync(folder, { recursive: true, force: true }));

function run(env: Record<string, string>, script = entryPoint) {
  const child = spawn(process.execPath, [script], {
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise<{ code: number | null; stderr: string }>((resolve) =>
    child.once('exit', (code) => resolve({ code, stderr })),
  );
}

test('a port already in use is one clear line naming PORT', async () => {
  const holder = net.createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  const { port } = holder.address() as net.AddressInfo;
  try {
    const { code, stderr } = await run({
      PORT: String(port),
      DATABASE_URL: `sqlite:${path.join(folder, 'in-use.sqlite')}`,
    });
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toEqual([
      `cannot listen on 127.0.0.1:${port}: the port is in use (set PORT to another port, or stop what holds it)`,
    ]);
  } finally {
    holder.close();
  }
});

test('the sandbox on a port already in use says so in one line', async () => {
  const holder = net.createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  const { port } = holder.address() as net.AddressInfo;
  try {
    const env = { ...process.env, PORT: String(port) } as Record<string, string>;
    delete env.DATABASE_URL;
    const { code, stderr } = await run(
      env,
      path.join(projectRoot, 'dist', 'src', 'cli', 'sandbox.js'),
    );
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toEqual([
      `sandbox: cannot listen on 127.0.0.1:${port}: the port is in use (set PORT to another port, or stop what holds it)`,
    ]);
  } finally {
    holder.close();
  }
});

test('--help lists every variable the service reads, with its default', () => {
  const help = execFileSync(process.execPath, [entryPoint, '--help'], { encoding: 'utf8' });
  const rows = [...Object.values(variables), ...Object.values(processVariables)];
  const listed = help.split('\n').filter((line) => /^ {2}[A-Z_]+ {2}\(.*; default /.test(line));
  expect(listed.map((line) => line.trim().split(' ')[0])).toEqual(rows.map((row) => row.name));
});
