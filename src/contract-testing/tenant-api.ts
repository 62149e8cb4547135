/**
 * The API of one tenant of the sandbox, called over HTTP with that tenant's write key, as a
 * consumer would: provider states and message producers make their changes through it, so every
 * change has its event exactly as in production.
 */
import { randomBytes } from 'node:crypto';
import { newestVersion } from '../versions/versions';

export type KeyScope = 'read' | 'write';

/** What the verifier needs of a running sandbox: its address and a way to make keys. */
export interface Sandbox {
  /** The base URL, without `/v1`. */
  url: string;
  /** A new key of the tenant (made on first use). */
  issueKey(tenant: string, scopes: KeyScope[]): Promise<string>;
}

export class TenantApi {
  /** The `X-Request-Id` of the last change that records an event, which the feed repeats as `request_id`. */
  lastChange?: string;

  private constructor(
    readonly sandbox: Sandbox,
    readonly name: string,
    readonly writeKey: string,
  ) {}

  /** A new, empty tenant with a write key. */
  static async create(sandbox: Sandbox, prefix: string): Promise<TenantApi> {
    const name = `${prefix}-${randomBytes(6).toString('hex')}`;
    return new TenantApi(sandbox, name, await sandbox.issueKey(name, ['read', 'write']));
  }

  readKey(): Promise<string> {
    return this.sandbox.issueKey(this.name, ['read']);
  }

  /** A call that must succeed: anything but a 2xx is an error naming the call and the problem. */
  async call<T = Record<string, string>>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ json: T; headers: Headers }> {
    const response = await fetch(`${this.sandbox.url}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${this.writeKey}`,
        // States are set up in the newest version, whatever an interaction's.
        'Api-Version': newestVersion,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok)
      throw new Error(`${method} ${path} answered ${response.status} while setting up: ${text}`);
    if (method !== 'GET' && /^\/v1\/(projects|tasks)\b/.test(path))
      this.lastChange = response.headers.get('x-request-id') ?? undefined;
    return { json: (text === '' ? undefined : JSON.parse(text)) as T, headers: response.headers };
  }
}
