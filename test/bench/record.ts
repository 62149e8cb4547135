/**
 * `make bench`: runs every part in turn, printing their figures as they come, and writes the same
 * text, under a header that dates it (UTC times, the commit, the machine, Node and MariaDB), to
 * benchmarks/current.md, the current results BENCHMARKS.md points to. The file is replaced only
 * when every part finished, so a failed run leaves the last complete results in place and its own
 * figures in benchmarks/current.failed.md.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { projectRoot } from '../../src/paths';

/** In the order they run; the abuse part runs the fan-out, idle-socket and long-poll parts too. */
const parts = [
  'startup-bench',
  'verify-pact-bench',
  'run-bench',
  'versions-bench',
  'events-bench',
  'webhooks-bench',
  'follow-bench',
  'abuse-bench',
  'hostile-matrix',
  'scale',
  'planning-bench',
  'cluster-bench',
];

const resultsFolder = path.join(projectRoot, 'benchmarks');
const currentFile = path.join(resultsFolder, 'current.md');
const failedFile = path.join(resultsFolder, 'current.failed.md');
const mysqlUrl = process.env.BENCH_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/';

function git(...args: string[]): string {
  const run = spawnSync('git', args, { cwd: projectRoot, encoding: 'utf8' });
  return run.status === 0 ? run.stdout.trim() : '';
}

function commit(): string {
  const head = git('rev-parse', '--short=12', 'HEAD');
  if (head === '') return 'unknown (not a git checkout)';
  const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
  return `\`${head}\` (${git('log', '-1', '--format=%s', 'HEAD').slice(0, 100)})${dirty ? ', with uncommitted changes' : ''}`;
}

async function mariadbVersion(): Promise<string> {
  const server = new URL(mysqlUrl);
  try {
    const connection = await mysql.createConnection({
      host: server.hostname,
      port: Number(server.port || 3306),
      user: decodeURIComponent(server.username),
      password: decodeURIComponent(server.password),
    });
    try {
      const [rows] = await connection.query('SELECT VERSION() AS version');
      return `MariaDB ${(rows as { version: string }[])[0].version} at ${server.host}`;
    } finally {
      await connection.end();
    }
  } catch (error) {
    return `no MariaDB answered at ${server.host} (${(error as Error).message})`;
  }
}

/** Runs one part, its output to the terminal and the file alike; resolves with its exit code. */
function runPart(part: string, out: fs.WriteStream): Promise<number> {
  const child = spawn(process.execPath, [path.join(__dirname, `${part}.js`)], {
    cwd: projectRoot,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  child.stdout.on('data', (chunk: Buffer) => {
    process.stdout.write(chunk);
    out.write(chunk);
  });
  return new Promise((resolve) =>
    child.once('close', (code, signal) => resolve(code ?? (signal ? 128 : 1))),
  );
}

async function main(): Promise<void> {
  const started = new Date();
  const machine =
    `${os.availableParallelism()} CPUs (\`nproc\`; ${os.cpus()[0]?.model ?? 'unknown model'}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ` +
    `load average ${os
      .loadavg()
      .map((n) => n.toFixed(1))
      .join(' ')} at the start; Node ${process.version}; ${await mariadbVersion()}`;
  const settings = Object.entries(process.env)
    .filter(([name]) => name.startsWith('BENCH_'))
    .map(([name, value]) => `${name}=${value}`);
  fs.mkdirSync(resultsFolder, { recursive: true });
  const bodyFile = path.join(resultsFolder, '.current.body.tmp');
  const body = fs.createWriteStream(bodyFile);
  let failed: string | undefined;
  for (const part of parts) {
    const code = await runPart(part, body);
    if (code !== 0) {
      failed = `${part} exited with ${code}`;
      break;
    }
  }
  await new Promise((resolve) => body.end(resolve));
  const header = [
    '# Current benchmark results',
    '',
    `Written by \`make bench\` (test/bench/record.ts); how to read them: [BENCHMARKS.md](../BENCHMARKS.md).`,
    '',
    `- **Run:** ${started.toISOString()} to ${new Date().toISOString()} (UTC)`,
    `- **Commit:** ${commit()}`,
    `- **Machine:** ${machine}`,
    `- **Settings:** ${settings.length === 0 ? 'the defaults' : settings.join(', ')}`,
    ...(failed ? [`- **Incomplete:** ${failed}; the parts after it did not run`] : []),
    '',
  ].join('\n');
  const target = failed ? failedFile : currentFile;
  fs.writeFileSync(target, header + fs.readFileSync(bodyFile, 'utf8'));
  fs.rmSync(bodyFile);
  console.error(
    `\n${failed ? `make bench failed (${failed}); its figures are in` : 'Results written to'} ${path.relative(projectRoot, target)}`,
  );
  if (failed) process.exit(1);
  fs.rmSync(failedFile, { force: true });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
