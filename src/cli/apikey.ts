/**
 * `npm run -s apikey -- <create|list|revoke>`: issues and manages API keys in the database the
 * service uses (DATABASE_URL, as for `npm start`).
 *
 *   create --tenant NAME [--scopes read,write] [--expires-in 30d]
 *                                 prints the new key alone on the last line
 *   list                          id, tenant, scopes, created, last used, state; never a key
 *   revoke KEY_ID                 refuses the key from then on, on every instance
 */
import { parseArgs } from 'node:util';
import { apiKeyScopes, type ApiKeyScope } from '../api-key-format';
import { createRepositories, type Repositories } from '../all-repositories';
import { issueApiKey } from './issue-api-key';
import { runDatabaseCommand, UsageError } from './database-command';

const usage = `usage: npm run -s apikey -- create --tenant NAME [--scopes read,write] [--expires-in 30d|12h|90m]
       npm run -s apikey -- list
       npm run -s apikey -- revoke KEY_ID`;

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
  let values: { tenant?: string; scopes?: string; 'expires-in'?: string };
  try {
    ({ values } = parseArgs({
      args,
      options: {
        tenant: { type: 'string' },
        scopes: { type: 'string', default: 'read,write' },
        'expires-in': { type: 'string' },
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
  const { key, keyId, tenant } = await issueApiKey(repositories, tenantName, scopes, expiresAt);
  const expiry = expiresAt ? `, expiring ${expiresAt.toISOString()}` : '';
  console.log(
    `Created key ${keyId} for tenant ${tenant} with scopes ${scopes.join(',')}${expiry}. It is shown only now:`,
  );
  console.log(key);
}

async function list(repositories: Repositories): Promise<void> {
  const keys = await repositories.apiKeys.list();
  console.log(['KEY_ID', 'TENANT', 'SCOPES', 'CREATED', 'LAST_USED', 'STATE'].join('\t'));
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

runDatabaseCommand(usage, {
  create: (knex, args) => create(createRepositories(knex), args),
  list: (knex) => list(createRepositories(knex)),
  revoke: (knex, args) => revoke(createRepositories(knex), args),
});
