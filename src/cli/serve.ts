/** `npm start`: serves the API with the configuration from the environment. */
import { ConfigError, loadConfig, redact } from '../config';
import { startService } from '../server';

async function main(): Promise<void> {
  const config = loadConfig();
  const service = await startService(config);
  const where = config.database.client === 'sqlite' ? config.database.filename : redact(config.database.url);
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
