/**
 * A cluster test's requests as its one tenant, to whichever instance it names: each answer read
 * whole, and every 500 kept, for the test's afterEach to fail on (no request may produce one).
 */
import type { components } from '../../generated/api';

type Event = components['schemas']['Event'];

export interface Answer<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** `key` is read at each call: the tenant is made in beforeAll, after the module is loaded. */
export function tenantCalls(key: () => string, defaultHeaders: Record<string, string> = {}) {
  const internalErrors: string[] = [];
  async function call<T = any>(
    base: string,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Answer<T>> {
    const response = await fetch(base + path, {
      method,
      headers: {
        Authorization: `Bearer ${key()}`,
        'Content-Type': 'application/json',
        ...defaultHeaders,
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status === 500) internalErrors.push(`${method} ${path}: ${text}`);
    return {
      status: response.status,
      headers: response.headers,
      body: text ? JSON.parse(text) : undefined,
    };
  }
  /** The tenant's whole feed, page after page, through one instance. */
  async function wholeFeed(base: string): Promise<Event[]> {
    const events: Event[] = [];
    let cursor = '';
    for (;;) {
      const page = (await call(base, 'GET', `/v1/events?limit=200${cursor && `&cursor=${cursor}`}`))
        .body as { data: Event[]; next_cursor: string; has_more: boolean };
      events.push(...page.data);
      cursor = page.next_cursor;
      if (!page.has_more) return events;
    }
  }
  return { call, internalErrors, wholeFeed };
}

/** How many of each status, in order of status: `{ 201: 810, 503: 2 }`. */
export const countsOf = (statuses: number[]) =>
  Object.fromEntries(
    [...new Set(statuses)].sort().map((s) => [s, statuses.filter((x) => x === s).length]),
  );
