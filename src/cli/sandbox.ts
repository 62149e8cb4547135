/**
 * `npm run sandbox` (`make sandbox`): the real service, every behaviour of production, on a
 * throwaway SQLite file with two demo tenants, their keys and demo data, for teams that code
 * against the API before they have a backend of their own. The file is removed at exit unless
 * `--keep PATH` names one to keep (and to reuse on the next start). `--proxy` puts Prism's
 * validating proxy in front of it on the mock's port (4010), printing every answer that breaks
 * the document. It listens on loopback only, unless `--host` says otherwise (HOST is not read:
 * its keys never expire and it allows private webhook targets), and it reuses only a file it made
 * itself (a marker table says so), never a database of the real service.
 *
 *   npm run sandbox [-- --keep PATH] [--host 127.0.0.1] [--proxy [--proxy-port 4010]]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, type Config } from '../config';
import { createKnex } from '../db/knex';
import { migrateToLatest } from '../db/migrate';
import { createRepositories, type Repositories } from '../all-repositories';
import type { WriteContext } from '../db/transactions';
import { openapiDocumentPath, projectRoot } from '../paths';
import { startService, type RunningService } from '../server';
import { issueApiKey } from './issue-api-key';
import { describeStartFailure } from './start-failure';
import { endWithThisProcess, onStopSignal, stopWithParent } from './process-lifetime';
import { sandboxConfig, sandboxRetrySchedule } from './sandbox-config';

/** The port `make mock` serves on: code written against the mock gains state without changing its URL. */
const mockPort = 4010;

interface DemoTenant {
  name: string;
  writeKey: string;
  readKey: string;
}

/** A table only the sandbox makes: a file without it is not the sandbox's to fill with demo tenants. */
const markerTable = 'sandbox_made_this_database';

/**
 * Tenants, keys and demo data, written before the service starts (each tenant's data in one
 * transaction, with its events, which the service numbers as it starts): every key works from its
 * first request, with its whole minute of requests, and the sandbox is ready at once.
 */
async function makeTenants(config: Config, withData: boolean): Promise<DemoTenant[]> {
  const knex = createKnex(config.database);
  try {
    if (withData) await knex.schema.createTable(markerTable, (table) => table.string('note'));
    else if (!(await knex.schema.hasTable(markerTable)))
      throw new ConfigError(
        `${(config.database as { filename: string }).filename} was not made by the sandbox: it would add demo tenants and keys that never expire to it, so it reuses only a file it made itself; give --keep a new path`,
      );
    await migrateToLatest(knex);
    const repositories = createRepositories(knex);
    const tenants: DemoTenant[] = [];
    for (const [index, name] of ['demo-acme', 'demo-globex'].entries()) {
      const writeKey = (await issueApiKey(repositories, name, ['read', 'write'])).key;
      const readKey = (await issueApiKey(repositories, name, ['read'])).key;
      tenants.push({ name, writeKey, readKey });
      const { tenant_id: tenantId } = await repositories.tenants.findOrCreate(name);
      if (withData)
        await repositories.inTransaction(`sandbox-seed-${index}`, (write) =>
          seed(repositories, tenantId, demoProjects[index], write),
        );
    }
    return tenants;
  } finally {
    await knex.destroy();
  }
}

const demoProjects = [
  { name: 'Website relaunch', tasks: 55 },
  { name: 'Quarterly report', tasks: 3 },
];

/** A project with tasks in each status, more of them than a page holds for the first tenant. */
async function seed(
  repositories: Repositories,
  tenantId: string,
  demo: (typeof demoProjects)[number],
  write: WriteContext,
): Promise<void> {
  const project = await repositories.projects.create(
    tenantId,
    { name: demo.name, description: 'Demo data of the sandbox' },
    write,
  );
  for (let i = 0; i < demo.tasks; i++) {
    const task = await repositories.tasks.create(
      tenantId,
      {
        project_id: project.value.project_id,
        title: `Demo task ${i + 1}`,
        description: i % 4 === 0 ? null : `Step ${i + 1} of the demo`,
      },
      write,
    );
    const status = (['pending', 'in_progress', 'done'] as const)[i % 3];
    if (status !== 'pending')
      await repositories.tasks.update(tenantId, task.value.task_id, { status }, undefined, write);
  }
}

function banner(
  url: string,
  tenants: DemoTenant[],
  config: Config,
  kept: string | undefined,
  proxyPort: string | undefined,
): string {
  const lines = [
    '',
    'Task Tracker sandbox: the real service on a throwaway SQLite file',
    `  API         ${url}/v1`,
    ...(proxyPort
      ? [
          `  Proxy       http://127.0.0.1:${proxyPort}/v1   (Prism's validating proxy: answers that break the document are printed)`,
        ]
      : []),
    `  Reference   ${url}/docs`,
    `  Contract    ${url}/openapi.yaml`,
    '',
    ...tenants.flatMap((tenant) => [
      `  Tenant ${tenant.name}`,
      `    write key      ${tenant.writeKey}`,
      `    read-only key  ${tenant.readKey}`,
    ]),
    '',
    '  Demo data: demo-acme has "Website relaunch" with 55 tasks (pending, in_progress, done: a list pages at 50); demo-globex has "Quarterly report" with 3. The feed has their events.',
    `  Webhooks: http and loopback targets are allowed; a failed delivery is retried after ${sandboxRetrySchedule.map((ms) => `${ms / 1000}s`).join(', ')}.`,
    `  Rate limits as in production: ${config.rateLimitPerMinute || 'no limit'} requests a minute per key.`,
    `  Database: ${kept ? `${kept} (kept)` : 'removed when the sandbox stops (Ctrl-C)'}.`,
    '',
  ];
  return lines.join('\n');
}

function startProxy(upstream: string, port: string): ChildProcess {
  const prism = path.join(projectRoot, 'node_modules', '.bin', 'prism');
  return endWithThisProcess(
    spawn(prism, ['proxy', openapiDocumentPath, upstream, '--host', '127.0.0.1', '--port', port], {
      stdio: 'inherit',
    }),
  );
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      keep: { type: 'string' },
      host: { type: 'string', default: '127.0.0.1' },
      proxy: { type: 'boolean', default: false },
      'proxy-port': { type: 'string', default: String(mockPort) },
    },
  });
  const folder = values.keep
    ? undefined
    : fs.mkdtempSync(path.join(os.tmpdir(), 'task-tracker-sandbox-'));
  const file = values.keep ? path.resolve(values.keep) : path.join(folder!, 'sandbox.sqlite');
  const removeFolder = () => folder && fs.rmSync(folder, { recursive: true, force: true });
  let service: RunningService | undefined;
  let proxy: ChildProcess | undefined;
  try {
    const config = sandboxConfig(file, values.host!);
    const fresh = !fs.existsSync(file);
    const tenants = await makeTenants(config, fresh);
    service = await startService(config);
    if (values.proxy) proxy = startProxy(service.url, values['proxy-port']!);
    console.log(
      banner(
        service.url,
        tenants,
        config,
        values.keep && file,
        values.proxy ? values['proxy-port']! : undefined,
      ),
    );
  } catch (error) {
    await service?.stop();
    removeFolder();
    throw error;
  }
  const stop = onStopSignal(() => {
    proxy?.kill('SIGTERM');
    service!.stop().finally(() => {
      removeFolder();
      process.exit(0);
    });
  });
  stopWithParent(stop);
}

main().catch((error) => {
  const described = error instanceof ConfigError ? error.message : describeStartFailure(error);
  console.error(typeof described === 'string' ? `sandbox: ${described}` : described);
  process.exit(1);
});
