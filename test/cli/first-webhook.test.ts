/**
 * The README's "Your first webhook, on this machine", run as written, its addresses moved to free
 * ports: `WEBHOOK_ALLOW_PRIVATE_TARGETS=true make run` (make's install step skipped: the tests run
 * from the installed tree) passes the setting through make and npm to the service; with the key
 * made as "First calls" makes it, the registration, the receiver (`npm run -s events -- receive`)
 * and the change are pasted into one shell, and the receiver prints what the README shows: its
 * address, then the delivery verified. The forged delivery is answered as the README's comments
 * say, and printed as refused. Without the setting the README's registration is refused, naming it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { projectRoot } from '../../src/paths';
import { freePort } from '../support/free-port';
import { startTestService } from '../support/test-service';

const readme = fs.readFileSync(path.join(projectRoot, 'README.md'), 'utf8');
const step = readme.slice(
  readme.indexOf('### Your first webhook, on this machine'),
  readme.indexOf('### Following changes'),
);
const blocks = [...step.matchAll(/```(sh|text)\n([\s\S]*?)```/g)].map((match) => match[2]);
const [serve, register, printed, forged] = blocks;
const keyLine = /^KEY=\$\(.*\)$/m.exec(readme)![0];
const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'tt-first-webhook-'));
const groups: ChildProcess[] = [];

/** Whether any process of the group led by `pid` is still there. */
function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

afterAll(async () => {
  // Each shell leads a process group: make, npm and the service under it, or the receiver it left
  // in the background. SIGTERM lets the service stop; what is still there after 10 s is killed.
  for (const child of groups) if (groupAlive(child.pid!)) process.kill(-child.pid!, 'SIGTERM');
  const deadline = Date.now() + 10_000;
  while (groups.some((child) => groupAlive(child.pid!)) && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 100));
  for (const child of groups) if (groupAlive(child.pid!)) process.kill(-child.pid!, 'SIGKILL');
  fs.rmSync(folder, { recursive: true, force: true });
});

/** The exit code of `child`, once it has exited. */
const exitCode = (child: ChildProcess) =>
  child.exitCode !== null
    ? Promise.resolve(child.exitCode)
    : new Promise((resolve) => child.once('exit', resolve));

/** Runs `script` in bash, in a process group of its own, calling `onLine` for each line it prints (`stderr: …` for its errors). */
function shell(script: string, env: NodeJS.ProcessEnv, onLine: (line: string) => void) {
  const child = spawn('bash', ['-c', script], {
    cwd: projectRoot,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  groups.push(child);
  readline.createInterface({ input: child.stdout! }).on('line', onLine);
  // Kept with the output (a failure's message shows them), not printed: make says it was terminated.
  readline
    .createInterface({ input: child.stderr! })
    .on('line', (line) => onLine(`stderr: ${line}`));
  return child;
}

/** Resolves with the first line `lines` gets that matches, or rejects after `timeoutMs`. */
function lineMatching(lines: string[], pattern: RegExp, timeoutMs = 60_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const look = () => {
      const found = lines.find((line) => pattern.test(line));
      if (found) return resolve(found);
      if (Date.now() > deadline)
        return reject(new Error(`no line matched ${pattern} in:\n${lines.join('\n')}`));
      setTimeout(look, 100);
    };
    look();
  });
}

it('has the steps the test runs: the service, the registration with the receiver, what it prints, a forged delivery', () => {
  expect(serve.trim()).toBe('WEBHOOK_ALLOW_PRIVATE_TARGETS=true make run');
  expect(register).toContain('npm run -s events -- receive');
  expect(printed).toMatch(/^Receiving webhooks on /);
  expect(forged).toContain('webhook-signature: v1,');
});

it('delivers to the receiver the README starts, which verifies it, and refuses a forged one', async () => {
  const [servicePort, receiverPort] = [await freePort(), await freePort()];
  const local = (text: string) =>
    text
      .replaceAll('127.0.0.1:3000', `127.0.0.1:${servicePort}`)
      .replaceAll('4242', String(receiverPort));
  const { WEBHOOK_ALLOW_PRIVATE_TARGETS: _, ...outside } = process.env;
  const env = {
    ...outside,
    PORT: String(servicePort),
    DATABASE_URL: `sqlite:${path.join(folder, 'tasks.sqlite')}`,
  };

  const serviceLines: string[] = [];
  shell(serve.replace('make run', 'make -o node_modules/.installed run'), env, (line) =>
    serviceLines.push(line),
  );
  const serving = await lineMatching(serviceLines, /"msg":"task-tracker serving"/);
  expect(JSON.parse(serving).url).toBe(`http://127.0.0.1:${servicePort}/v1`);
  // The setting reached the service through make and npm: it says the guard is off.
  await lineMatching(serviceLines, /WEBHOOK_ALLOW_PRIVATE_TARGETS=true: the SSRF guard is off/);

  const receiverLines: string[] = [];
  const pasted = shell(`${keyLine}\n${local(register)}`, env, (line) => receiverLines.push(line));
  const [banner, delivered] = local(printed).trim().split('\n');
  const verified = /^\S+Z {2}project\.created {2}#\d+ {2}verified {2}project [0-9a-f-]{36}$/;
  expect(delivered).toMatch(verified);
  await lineMatching(receiverLines, verified);
  expect(receiverLines.filter((line) => !line.startsWith('stderr: '))[0]).toBe(banner);
  expect(await exitCode(pasted)).toBe(0);

  const answered: string[] = [];
  const forger = shell(local(forged), env, (line) => answered.push(line));
  await new Promise((resolve) => forger.once('close', resolve));
  const comments = forged
    .split('\n')
    .filter((line) => line.startsWith('# '))
    .map((line) => line.slice(2));
  expect(answered).toEqual(comments);
  await lineMatching(
    receiverLines,
    /refused, answered 401: signature: No matching signature found$/,
  );
}, 120_000);

it('refuses the README registration where the service runs without the setting, naming it', async () => {
  const api = await startTestService();
  try {
    const body = /-d '(\{"url": [^']*\})'/.exec(register)![1];
    const refused = await api.send('POST', '/v1/webhook-endpoints', {
      key: await api.createKey('acme'),
      headers: { 'Content-Type': 'application/json' },
      body,
    });
    expect(refused.status).toBe(400);
    expect(refused.json.detail).toContain('WEBHOOK_ALLOW_PRIVATE_TARGETS=true');
  } finally {
    await api.stop();
  }
});
