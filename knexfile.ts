// For the knex CLI (npx knex migrate:status ...): the service's own database configuration.
import { loadConfig } from './src/config';
import { knexConfig } from './src/db/knex';

export default knexConfig(loadConfig().database);
