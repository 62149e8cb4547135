/**
 * The client: every path of the document typed (openapi-fetch), and over it the resources as
 * methods that answer their data or throw a ProblemError, lists as async iterables, and the feed
 * as a follower.
 */
import createFetchClient, { type Client } from 'openapi-fetch';
import type { paths, components } from './api';
import { follow, type FollowOptions, type FollowedEvent } from './follow';
import { paginate, type Paginator } from './paging';
import { problemFrom } from './problems';
import { defaultRetryPolicy, retryingFetch, type RetryPolicy } from './retry';
import type { Project, Task, TypedEvent, WebhookDelivery, WebhookEndpoint } from './types';

type Schemas = components['schemas'];
type Query<Path extends keyof paths> = paths[Path]['get'] extends {
  parameters: { query?: infer Q };
}
  ? NonNullable<Q>
  : never;

export interface ClientOptions {
  /** The service's address, without `/v1`: `https://tasks.example.com`. */
  baseUrl: string;
  apiKey: string;
  /** The longest one attempt may take (a long poll gets its `wait` on top); default 30 s. */
  timeoutMs?: number;
  /** Attempts after the first, for what may be retried; default 3. */
  maxRetries?: number;
  /** The fetch to use; the global one by default. */
  fetch?: (request: Request) => Promise<Response>;
  /** Backoff settings, for tests and for clients that must give up sooner. */
  retry?: Partial<Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs' | 'maxRetryAfterMs'>>;
}

/** Options of a create: the Idempotency-Key to send (one is made for the call otherwise). */
export interface CreateOptions {
  idempotencyKey?: string;
}
/** Options of a change: the ETag the change must find (412 otherwise); with it, a lost answer is retried. */
export interface ChangeOptions {
  ifMatch?: string;
}

/** Every path of the document (GET, POST, … as openapi-fetch gives them), and the resources' methods. */
export type TaskTrackerClient = Client<paths> & ReturnType<typeof resourcesOf>;

export function createClient(options: ClientOptions): TaskTrackerClient {
  const policy: RetryPolicy = {
    ...defaultRetryPolicy,
    ...options.retry,
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
  };
  const baseFetch = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const api: Client<paths> = createFetchClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: { Authorization: `Bearer ${options.apiKey}` },
    fetch: retryingFetch(policy, baseFetch),
  });
  return { ...api, ...resourcesOf(api) };
}

/** The resources' methods, over the typed paths. */
function resourcesOf(api: Client<paths>) {
  /** The data of a successful answer, or the answer's problem thrown. */
  async function data<T>(
    call: Promise<{ data?: T; error?: unknown; response: Response }>,
  ): Promise<T> {
    const { data, error, response } = await call;
    if (!response.ok) throw problemFrom(response, error);
    return data as T;
  }
  const created = (o?: CreateOptions) =>
    o?.idempotencyKey ? { 'Idempotency-Key': o.idempotencyKey } : {};
  const conditional = (o?: ChangeOptions) => (o?.ifMatch ? { 'If-Match': o.ifMatch } : {});

  const projects = {
    create: (body: Schemas['ProjectCreate'], o?: CreateOptions) =>
      data<Project>(api.POST('/v1/projects', { body, headers: created(o) })),
    get: (projectId: string) =>
      data<Project>(
        api.GET('/v1/projects/{project_id}', { params: { path: { project_id: projectId } } }),
      ),
    update: (projectId: string, body: Schemas['ProjectUpdate'], o?: ChangeOptions) =>
      data<Project>(
        api.PATCH('/v1/projects/{project_id}', {
          params: { path: { project_id: projectId } },
          body,
          headers: conditional(o),
        }),
      ),
    delete: (projectId: string, o?: ChangeOptions) =>
      data<void>(
        api.DELETE('/v1/projects/{project_id}', {
          params: { path: { project_id: projectId } },
          headers: conditional(o),
        }),
      ),
    list: (query: Omit<Query<'/v1/projects'>, 'cursor'> = {}): Paginator<Project> =>
      paginate((cursor) =>
        data(api.GET('/v1/projects', { params: { query: { ...query, cursor } } })),
      ),
  };

  const tasks = {
    create: (body: Schemas['TaskCreate'], o?: CreateOptions) =>
      data<Task>(api.POST('/v1/tasks', { body, headers: created(o) })),
    get: (taskId: string) =>
      data<Task>(api.GET('/v1/tasks/{task_id}', { params: { path: { task_id: taskId } } })),
    update: (taskId: string, body: Schemas['TaskUpdate'], o?: ChangeOptions) =>
      data<Task>(
        api.PATCH('/v1/tasks/{task_id}', {
          params: { path: { task_id: taskId } },
          body,
          headers: conditional(o),
        }),
      ),
    delete: (taskId: string, o?: ChangeOptions) =>
      data<void>(
        api.DELETE('/v1/tasks/{task_id}', {
          params: { path: { task_id: taskId } },
          headers: conditional(o),
        }),
      ),
    list: (
      projectId: string,
      query: Omit<Query<'/v1/projects/{project_id}/tasks'>, 'cursor'> = {},
    ): Paginator<Task> =>
      paginate((cursor) =>
        data(
          api.GET('/v1/projects/{project_id}/tasks', {
            params: { path: { project_id: projectId }, query: { ...query, cursor } },
          }),
        ),
      ),
  };

  const readFeedPage = (query: Query<'/v1/events'>, signal?: AbortSignal) =>
    data(api.GET('/v1/events', { params: { query }, signal })) as Promise<{
      data: TypedEvent[];
      next_cursor: string;
      has_more: boolean;
    }>;
  const events = {
    /** One page of the feed, as the service answers it. */
    page: (query: Query<'/v1/events'> = {}) => readFeedPage(query),
    /** Every event from a position on, as they happen: see FollowOptions. */
    follow: (o: FollowOptions = {}): AsyncGenerator<FollowedEvent> =>
      follow(readFeedPage as Parameters<typeof follow>[0], o),
  };

  const endpointPath = (id: string) => ({ path: { webhook_endpoint_id: id } });
  const webhookEndpoints = {
    /** The answer carries the endpoint's secret, shown only here and on rotation. */
    create: (body: Schemas['WebhookEndpointCreate'], o?: CreateOptions) =>
      data<Schemas['WebhookEndpointWithSecret']>(
        api.POST('/v1/webhook-endpoints', { body, headers: created(o) }),
      ),
    get: (id: string) =>
      data<WebhookEndpoint>(
        api.GET('/v1/webhook-endpoints/{webhook_endpoint_id}', { params: endpointPath(id) }),
      ),
    update: (id: string, body: Schemas['WebhookEndpointUpdate']) =>
      data<WebhookEndpoint>(
        api.PATCH('/v1/webhook-endpoints/{webhook_endpoint_id}', {
          params: endpointPath(id),
          body,
        }),
      ),
    delete: (id: string) =>
      data<void>(
        api.DELETE('/v1/webhook-endpoints/{webhook_endpoint_id}', { params: endpointPath(id) }),
      ),
    list: (
      query: Omit<Query<'/v1/webhook-endpoints'>, 'cursor'> = {},
    ): Paginator<WebhookEndpoint> =>
      paginate((cursor) =>
        data(api.GET('/v1/webhook-endpoints', { params: { query: { ...query, cursor } } })),
      ),
    rotateSecret: (id: string) =>
      data(
        api.POST('/v1/webhook-endpoints/{webhook_endpoint_id}/rotate-secret', {
          params: endpointPath(id),
        }),
      ),
    deliveries: (
      id: string,
      query: Omit<Query<'/v1/webhook-endpoints/{webhook_endpoint_id}/deliveries'>, 'cursor'> = {},
    ): Paginator<WebhookDelivery> =>
      paginate((cursor) =>
        data(
          api.GET('/v1/webhook-endpoints/{webhook_endpoint_id}/deliveries', {
            params: { ...endpointPath(id), query: { ...query, cursor } },
          }),
        ),
      ),
    redeliver: (id: string, eventId: string) =>
      data<WebhookDelivery>(
        api.POST('/v1/webhook-endpoints/{webhook_endpoint_id}/deliveries', {
          params: endpointPath(id),
          body: { event_id: eventId },
        }),
      ),
  };

  return { projects, tasks, events, webhookEndpoints };
}
