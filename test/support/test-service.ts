/**
 * The real service, started on port 0 over a database of the test's own, with helpers to make
 * API keys and to call it through the typed client or raw HTTP. Every response is checked
 * against the OpenAPI document before a test sees it.
 */
import createClient from 'openapi-fetch';
import type { DestinationStream } from 'pino';
import type { Config, DatabaseConfig } from '../../src/config';
import type { paths } from '../../generated/api';
import { hashApiKey, type ApiKeyScope } from '../../src/api-key-format';
import { issueApiKey } from '../../src/cli/issue-api-key';
import type { VersionSet } from '../../src/http/older-versions';
import { createRepositories, type Repositories } from '../../src/all-repositories';
import { startService, type RunningService } from '../../src/server';
import { assertConformsToContract } from './contract';
import { startPrism } from './prism';
import { testConfig } from './test-config';
import { createTestDatabase, type TestDatabase } from './test-database';

/**
 * With CONTRACT_PROXY=1 (`make contract`) the typed client's requests, every one of them valid,
 * go through `prism proxy --errors`, which checks request and response against the document.
 * Requests that are invalid on purpose (send) go straight to the service: Prism would answer
 * those itself.
 */
const throughPrism = process.env.CONTRACT_PROXY === '1';

/** fetch, with the response checked against the contract, and failing on any Prism violation. */
async function contractFetch(input: Request): Promise<Response> {
  const response = await fetch(input);
  const violations = response.headers.get('sl-violations');
  if (violations) throw new Error(`${input.method} ${input.url}: Prism reports ${violations}`);
  const text = await response.clone().text();
  await assertConformsToContract(input.method, new URL(input.url).pathname, {
    status: response.status,
    headers: response.headers,
    text,
  });
  return response;
}

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The body parsed as JSON, or undefined when there is none. */
  json: any;
}

export interface TestService {
  baseUrl: string;
  service: RunningService;
  /** The service's database, for a command run against it. */
  database: DatabaseConfig;
  repositories: Repositories;
  /** A new key for the tenant (created on first use), as `apikey create` makes one. */
  createKey(tenant: string, scopes?: ApiKeyScope[]): Promise<string>;
  /** The typed client (openapi-fetch over the generated paths), authenticated with the key. */
  client(key: string): ReturnType<typeof createClient<paths>>;
  /** Any request at all, for what the typed client cannot send (bad JSON, wrong types...). */
  send(
    method: string,
    path: string,
    init?: { key?: string; headers?: Record<string, string>; body?: string | Uint8Array },
  ): Promise<RawResponse>;
  stop(): Promise<void>;
}

export async function startTestService(
  options: {
    config?: Partial<Config>;
    logDestination?: DestinationStream;
    webhookThreadEntry?: string;
    apiVersions?: VersionSet;
  } = {},
): Promise<TestService> {
  const database: TestDatabase = await createTestDatabase();
  const service = await startService(testConfig(database.config, options.config), {
    logDestination: options.logDestination,
    webhookThreadEntry: options.webhookThreadEntry,
    apiVersions: options.apiVersions,
  });
  const repositories = createRepositories(service.knex);
  const prism = throughPrism ? await startPrism({ proxyTo: service.url }) : undefined;
  return {
    baseUrl: service.url,
    service,
    database: database.config,
    repositories,
    async createKey(tenant, scopes = ['read', 'write']) {
      return (await issueApiKey(repositories, tenant, scopes)).key;
    },
    client(key) {
      return createClient<paths>({
        baseUrl: prism?.url ?? service.url,
        headers: { Authorization: `Bearer ${key}` },
        fetch: contractFetch,
      });
    },
    async send(method, path, init = {}) {
      const headers: Record<string, string> = { ...init.headers };
      if (init.key !== undefined) headers.Authorization = `Bearer ${init.key}`;
      const response = await contractFetch(
        new Request(service.url + path, { method, headers, body: init.body }),
      );
      const text = await response.text();
      return {
        status: response.status,
        headers: response.headers,
        text,
        json: text === '' ? undefined : JSON.parse(text),
      };
    },
    async stop() {
      await prism?.stop();
      await service.stop();
      await database.drop();
    },
  };
}

/**
 * Copies a key, with its tenant, from one instance's database to another's, as if the two
 * instances shared one database: the same key id, which the rate limit counts by.
 */
export async function shareKey(from: TestService, to: TestService, key: string): Promise<void> {
  const row = await from.service.knex('api_keys').where('key_hash', hashApiKey(key)).first();
  const tenant = await from.service.knex('tenants').where('tenant_id', row.tenant_id).first();
  await to.service.knex('tenants').insert(tenant).onConflict('tenant_id').ignore();
  await to.service.knex('api_keys').insert(row);
}
