/**
 * `npm start`: serves the API with the configuration from the environment. `npm start -- --help`
 * lists the variables (with `--markdown`, as the README's table).
 */
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig, redact } from '../config';
import { configurationHelp, configurationTable } from '../config-docs';
import { createRepositories } from '../all-repositories';
import { startService, type RunningService } from '../server';
import { issueApiKey } from './issue-api-key';
import { describeStartFailure } from './start-failure';
import { onStopSignal } from './process-lifetime';

/**
 * On the embedded SQLite database, a new user gets a first key without a second command: when
 * the database has none, one is made for tenant "default". A key never goes into the log: it is
 * shown once on an interactive terminal; where standard output is not one (it is the log
 * stream, collected somewhere), the key goes to a file beside the database that only its owner
 * may read, and the log says where.
 */
async function issueFirstKey(service: RunningService, databaseFile: string): Promise<void> {
  const repositories = createRepositories(service.knex);
  if ((await repositories.apiKeys.count()) > 0) return;
  const { key, keyId } = await issueApiKey(repositories, 'default', ['read', 'write']);
  if (process.stdout.isTTY) {
    console.log(
      `No API key existed, so key ${keyId} was made for tenant "default" (read, write). It is shown only now:`,
    );
    console.log(key);
    return;
  }
  const file = path.join(path.dirname(databaseFile), 'first-api-key.txt');
  // One left by an earlier database may be readable by others: the mode applies to a new file only.
  fs.rmSync(file, { force: true });
  fs.writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  service.logger.info(
    { key_id: keyId, tenant: 'default', file },
    'no API key existed: one was made, and written to a file only its owner may read',
  );
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    console.log(args.includes('--markdown') ? configurationTable() : configurationHelp());
    return;
  }
  const config = loadConfig();
  const service = await startService(config);
  const where =
    config.database.client === 'sqlite' ? config.database.filename : redact(config.database.url);
  if (config.database.client === 'sqlite') await issueFirstKey(service, config.database.filename);
  service.logger.info(
    { url: `${service.url}/v1`, database: `${config.database.client} ${where}` },
    'task-tracker serving',
  );
  // No watch on the parent here: a service started by a script that then ends (nohup) serves on.
  onStopSignal(() => {
    service.stop().then(
      () => process.exit(0),
      (error) => {
        service.logger.error({ err: error }, 'stopping failed');
        process.exit(1);
      },
    );
  });
}

main().catch((error) => {
  console.error(describeStartFailure(error));
  process.exit(1);
});
