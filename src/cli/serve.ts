/** `npm start`: serves the API with the configuration from the environment. */
import { ConfigError, loadConfig, redact } from '../config';
import { createRepositories } from '../db/repositories';
import { startService, type RunningService } from '../server';
import { issueApiKey } from './issue-api-key';

/**
 * On the embedded SQLite database, a new user gets a first key without a second command: when
 * the database has none, one is made for tenant "default" and shown once, here.
 */
async function issueFirstKey(service: RunningService): Promise<void> {
  const repositories = createRepositories(service.knex);
  if ((await repositories.apiKeys.count()) > 0) return;
  const { key, keyId } = await issueApiKey(repositories, 'default', ['read', 'write']);
  console.log(`No API key existed, so key ${keyId} was made for tenant "default" (read, write). It is shown only now:`);
  console.log(key);
}

async function main(): Promise<void> {
  const config = loadConfig();
  const service = await startService(config);
  const where = config.database.client === 'sqlite' ? config.database.filename : redact(config.database.url);
  if (config.database.client === 'sqlite') await issueFirstKey(service);
  service.logger.info({ url: `${service.url}/v1`, database: `${config.database.client} ${where}` }, 'task-tracker serving');
  const stop = () => {
    service.stop().then(
      () => process.exit(0),
      (error) => {
        service.logger.error({ err: error }, 'stopping failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error) => {
  console.error(error instanceof ConfigError ? `configuration error: ${error.message}` : error);
  process.exit(1);
});
