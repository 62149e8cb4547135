/**
 * `npm run -s apikey -- <create|list|revoke|set-version>`: issues and manages API keys in the
 * database the service uses (DATABASE_URL, as for `npm start`).
 *
 *   create --tenant NAME [--scopes read,write] [--expires-in 30d] [--api-version VERSION]
 *                                 prints the new key alone on the last line
 *   list                          id, tenant, scopes, created, last used, state, version; never a key
 *   revoke KEY_ID                 refuses the key from then on, on every instance
 *   set-version --tenant NAME VERSION
 *                                 moves the tenant, and its keys not pinned otherwise, to VERSION
 *   set-version KEY_ID VERSION    pins one key to VERSION, whatever its tenant's
 */
import { parseArgs } from 'node:util';
import { apiKeyScopes, type ApiKeyScope } from '../api-key-format';
import { isSupportedVersion, supportedVersions, type ApiVersion } from '../versions/versions';
import { createRepositories, type Repositories } from '../all-repositories';
import { issueApiKey } from './issue-api-key';
import { runDatabaseCommand, UsageError } from './database-command';

const usage = `usage: npm run -s apikey -- create --tenant NAME [--scopes read,write] [--expires-in 30d|12h|90m] [--api-version VERSION]
       npm run -s apikey -- list
       npm run -s apikey -- revoke KEY_ID
       npm run -s apikey -- set-version --tenant NAME VERSION
       npm run -s apikey -- set-version KEY_ID VERSION`;

function parseApiVersion(value: string | undefined): ApiVersion | undefined {
  if (value === undefined || isSupportedVersion(value)) return value;
  throw new UsageError(
    `${JSON.stringify(value)} is not a supported API version; the supported versions are ${supportedVersions.join(', ')}`,
  );
}

function parseScopes(value: string): ApiKeyScope[] {
  const scopes = [...new Set(value.split(',').map((s) => s.trim()))];
  const unknown = scopes.filter((s) => !(apiKeyScopes as readonly string[]).includes(s));
  if (scopes.length === 0 || unknown.length > 0) {
    throw new UsageError(
      `--scopes takes ${apiKeyScopes.join(', ')} separated by commas, not ${JSON.stringify(value)}`,
    );
  }
  return scopes as ApiKeyScope[];
}

function parseExpiry(value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const match = /^(\d{1,6})([mhd])$/.exec(value);
  if (!match)
    throw new UsageError(
      `--expires-in takes a number and m, h or d (90m, 12h, 30d), not ${JSON.stringify(value)}`,
    );
  const minutes = Number(match[1]) * { m: 1, h: 60, d: 1440 }[match[2] as 'm' | 'h' | 'd'];
  return new Date(Date.now() + minutes * 60_000);
}

async function create(repositories: Repositories, args: string[]): Promise<void> {
  let values: { tenant?: string; scopes?: string; 'expires-in'?: string; 'api-version'?: string };
  try {
    ({ values } = parseArgs({
      args,
      options: {
        tenant: { type: 'string' },
        scopes: { type: 'string', default: 'read,write' },
        'expires-in': { type: 'string' },
        'api-version': { type: 'string' },
      },
    }));
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${usage}`);
  }
  const tenantName = values.tenant?.trim();
  if (!tenantName || tenantName.length > 200)
    throw new UsageError('create needs --tenant NAME (1 to 200 characters)');
  const scopes = parseScopes(values.scopes!);
  const expiresAt = parseExpiry(values['expires-in']);
  const apiVersion = parseApiVersion(values['api-version']);
  const { key, keyId, tenant } = await issueApiKey(
    repositories,
    tenantName,
    scopes,
    expiresAt,
    apiVersion,
  );
  const expiry = expiresAt ? `, expiring ${expiresAt.toISOString()}` : '';
  const pinned = apiVersion ? `, pinned to API version ${apiVersion}` : '';
  console.log(
    `Created key ${keyId} for tenant ${tenant} with scopes ${scopes.join(',')}${expiry}${pinned}. It is shown only now:`,
  );
  console.log(key);
}

async function list(repositories: Repositories): Promise<void> {
  const keys = await repositories.apiKeys.list();
  console.log(
    ['KEY_ID', 'TENANT', 'SCOPES', 'CREATED', 'LAST_USED', 'STATE', 'API_VERSION'].join('\t'),
  );
  const now = new Date().toISOString();
  for (const key of keys) {
    const state =
      key.revoked_at !== null
        ? `revoked ${key.revoked_at}`
        : key.expires_at === null
          ? 'active'
          : key.expires_at > now
            ? `active until ${key.expires_at}`
            : `expired ${key.expires_at}`;
    console.log(
      [
        key.key_id,
        key.tenant,
        key.scopes.join(','),
        key.created_at,
        key.last_used_at ?? 'never',
        state,
        key.api_version_pinned ? `${key.api_version} (pinned)` : key.api_version,
      ].join('\t'),
    );
  }
}

async function revoke(repositories: Repositories, args: string[]): Promise<void> {
  const [keyId] = args;
  if (!keyId) throw new UsageError('revoke needs a KEY_ID (see list)');
  if (!(await repositories.apiKeys.revoke(keyId))) throw new UsageError(`no active key ${keyId}`);
  console.log(`Revoked key ${keyId}.`);
}

async function setVersion(repositories: Repositories, args: string[]): Promise<void> {
  let parsed: { values: { tenant?: string }; positionals: string[] };
  try {
    parsed = parseArgs({ args, options: { tenant: { type: 'string' } }, allowPositionals: true });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${usage}`);
  }
  const { values, positionals } = parsed;
  const expected = values.tenant === undefined ? 2 : 1;
  if (positionals.length !== expected)
    throw new UsageError(`set-version needs --tenant NAME VERSION, or KEY_ID VERSION\n${usage}`);
  const apiVersion = parseApiVersion(positionals[expected - 1])!;
  if (values.tenant !== undefined) {
    if (!(await repositories.tenants.setApiVersion(values.tenant, apiVersion)))
      throw new UsageError(`no tenant ${values.tenant}`);
    console.log(
      `Tenant ${values.tenant} is on API version ${apiVersion}, with its keys not pinned otherwise.`,
    );
    return;
  }
  const [keyId] = positionals;
  if (!(await repositories.apiKeys.setApiVersion(keyId, apiVersion)))
    throw new UsageError(`no key ${keyId}`);
  console.log(`Key ${keyId} is pinned to API version ${apiVersion}.`);
}

runDatabaseCommand(usage, {
  create: (knex, args) => create(createRepositories(knex), args),
  list: (knex) => list(createRepositories(knex)),
  revoke: (knex, args) => revoke(createRepositories(knex), args),
  'set-version': (knex, args) => setVersion(createRepositories(knex), args),
});
