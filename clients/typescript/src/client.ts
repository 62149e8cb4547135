/**
 * The client: every path of the document typed (openapi-fetch), and over it the resources as
 * methods that answer their data or throw a ProblemError, lists as async iterables, and the feed
 * as a follower. A client is made in one API version, which it sends as `Api-Version` on every
 * request, and its types are that version's document's.
 */
import createFetchClient, { type Client } from 'openapi-fetch';
import { follow, type FeedPageReader, type FollowOptions, type FollowedEvent } from './follow';
import { paginate, type Paginator } from './paging';
import { conditionValue, rememberETag, type ETagOrObject } from './etags';
import { problemFrom } from './problems';
import { environmentVariable, hasEnvironment } from './environment';
import {
  defaultRetryPolicy,
  newIdempotencyKey,
  outcomeHeader,
  retryingFetch,
  type RetryPolicy,
} from './retry';
import type {
  Project,
  Task,
  TaskBulkResult,
  TaskFilter,
  TypedEvent,
  WebhookDelivery,
  WebhookEndpoint,
} from './types';
import {
  chooseApiVersion,
  isPlanningVersion,
  type ApiVersion,
  type ComponentsOf,
  type DefaultApiVersion,
  type NewestApiVersion,
  type PathsOf,
  type PlanningVersion,
} from './versions';

type Schemas<V extends ApiVersion> = ComponentsOf<V>['schemas'];
/** The query of `GET Path` in version `V`. */
type Query<V extends ApiVersion, Path extends string> =
  PathsOf<V> extends { [P in Path]: { get: { parameters: { query?: infer Q } } } }
    ? NonNullable<Q>
    : never;

export interface ClientOptions<V extends ApiVersion = DefaultApiVersion> {
  /**
   * The API version the client is made in (`'2026-12-15'`): sent as `Api-Version` on every
   * request, and what its calls and results are typed by. Without it, TASK_TRACKER_API_VERSION
   * when set (the types are then still `2026-11-28`'s: name the version here to have its types),
   * else `2026-11-28`, the version every client had before versions. A version the kit does not
   * know is an error.
   */
  apiVersion?: V;
  /**
   * The service's address, without `/v1`: `https://tasks.example.com`. Without it,
   * TASK_TRACKER_URL (in Node); with neither, createClient throws.
   */
  baseUrl?: string;
  /** The API key sent as a bearer token. Without it, TASK_TRACKER_API_KEY (in Node); with neither, createClient throws. */
  apiKey?: string;
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
/**
 * Options of a change: the ETag the change must find (412 otherwise), or the project or task the
 * kit returned, which stands for the ETag it came with; with it, a lost answer is retried.
 */
export interface ChangeOptions {
  ifMatch?: ETagOrObject;
}
/**
 * Options of a read: with the ETag of a copy you hold (or the copy itself, as the kit returned
 * it), an unchanged resource is not sent again: the call answers that copy, or undefined for an ETag.
 */
export interface ReadOptions<T> {
  ifNoneMatch?: string | T;
}
/** A read of one resource; with `ifNoneMatch` as a string, undefined means "unchanged". */
export interface Read<T> {
  (id: string, options?: { ifNoneMatch?: T }): KitPromise<T>;
  (id: string, options: { ifNoneMatch: string | T }): KitPromise<T | undefined>;
}

/**
 * What a delete did: `'deleted'`, or, when its first answer was lost and the retry found nothing,
 * `'deleted or already absent'` (the lost attempt deleted it, or it never existed).
 */
export type DeleteOutcome = 'deleted' | 'deleted or already absent';

/** A call's answer: awaited, its data; `.withResponse()`, the data and the raw Response. */
export interface KitPromise<T> extends Promise<T> {
  /** The data and the raw Response, with its status and headers. */
  withResponse(): Promise<{ data: T; response: Response }>;
}

/** A page of the feed, as the service answers it in version `V`. */
export interface FeedPage<V extends ApiVersion = DefaultApiVersion> {
  data: TypedEvent<V>[];
  next_cursor: string;
  has_more: boolean;
}

/** A search's order (`sort`, as the lists'; `created_at` when absent) and its page size (`limit`). */
export type SearchOptions<V extends PlanningVersion = NewestApiVersion> = Omit<
  Schemas<V>['TaskSearch'],
  'filter' | 'cursor'
>;
/**
 * The tasks of a bulk call, by `filter` or by `task_ids` (exactly one of the two; at most 1,000
 * either way), and `dryRun`: when true, nothing changes and the answer says what would.
 */
export type BulkTasks<V extends PlanningVersion = NewestApiVersion> = (
  | { filter: TaskFilter<V>; task_ids?: never }
  | { task_ids: Schemas<V>['TaskIdList']; filter?: never }
) & { dryRun?: boolean };
/** A bulk update: its tasks and the `changes` each gets (`status`, `priority`, `labels_add`, …). */
export type BulkUpdate<V extends PlanningVersion = NewestApiVersion> = BulkTasks<V> & {
  changes: Schemas<V>['TaskBulkChanges'];
};

/** The methods a client has in a version whose document has the search and bulk changes. */
export interface PlanningMethods<V extends PlanningVersion = NewestApiVersion> {
  /** Every task of the tenant's projects that `filter` matches, in `sort` order, as an async iterable that pages on its own. */
  search(filter: TaskFilter<V>, options?: SearchOptions<V>): Paginator<Task<V>>;
  /** The same `changes` to every task matched or named, all or nothing, with one Idempotency-Key on every attempt; `dryRun` changes nothing and says what would change. */
  bulkUpdate(request: BulkUpdate<V>, options?: CreateOptions): KitPromise<TaskBulkResult<V>>;
  /** Deletes every task matched or named, all or nothing, with one Idempotency-Key on every attempt; `dryRun` deletes nothing and says what would be. */
  bulkDelete(request: BulkTasks<V>, options?: CreateOptions): KitPromise<TaskBulkResult<V>>;
}

/** A client's methods of tasks in version `V`: those of every version, and the planning ones where `V` has them. */
export type TaskMethods<V extends ApiVersion = DefaultApiVersion> = EveryVersionTaskMethods<V> &
  (V extends PlanningVersion ? PlanningMethods<V> : unknown);

/** The methods of tasks every version has. */
export interface EveryVersionTaskMethods<V extends ApiVersion = DefaultApiVersion> {
  /** Creates a task in a project, with one Idempotency-Key on every attempt (yours, or one made for the call). */
  create(body: Schemas<V>['TaskCreate'], options?: CreateOptions): KitPromise<Task<V>>;
  /** Reads a task; with `ifNoneMatch` (a copy the kit returned, or its ETag), an unchanged one is not sent again. */
  get: Read<Task<V>>;
  /** Changes a task (its status, title, …); with `ifMatch`, only if nobody changed it since (412 otherwise). */
  update(
    taskId: string,
    body: Schemas<V>['TaskUpdate'],
    options?: ChangeOptions,
  ): KitPromise<Task<V>>;
  /** Deletes a task: `'deleted'`, or `'deleted or already absent'` when a retry after a lost answer found nothing. */
  delete(taskId: string, options?: ChangeOptions): KitPromise<DeleteOutcome>;
  /** A project's tasks, filtered and sorted by `query`, as an async iterable that pages on its own. */
  list(
    projectId: string,
    query?: Omit<Query<V, '/v1/projects/{project_id}/tasks'>, 'cursor'>,
  ): Paginator<Task<V>>;
}

/**
 * The resources' methods of a client in version `V`: what they take and answer is that version's.
 * Each line of doc here is the package README's line for the method (scripts/generate-client-readme.js).
 */
export interface Resources<V extends ApiVersion = DefaultApiVersion> {
  projects: {
    /** Creates a project, with one Idempotency-Key on every attempt (yours, or one made for the call). */
    create(body: Schemas<V>['ProjectCreate'], options?: CreateOptions): KitPromise<Project<V>>;
    /** Reads a project; with `ifNoneMatch` (a copy the kit returned, or its ETag), an unchanged one is not sent again. */
    get: Read<Project<V>>;
    /** Changes a project; with `ifMatch` (a copy the kit returned, or its ETag), only if nobody changed it since (412 otherwise). */
    update(
      projectId: string,
      body: Schemas<V>['ProjectUpdate'],
      options?: ChangeOptions,
    ): KitPromise<Project<V>>;
    /** Deletes a project and its tasks: `'deleted'`, or `'deleted or already absent'` when a retry after a lost answer found nothing. */
    delete(projectId: string, options?: ChangeOptions): KitPromise<DeleteOutcome>;
    /** The tenant's projects, as an async iterable that pages on its own. */
    list(query?: Omit<Query<V, '/v1/projects'>, 'cursor'>): Paginator<Project<V>>;
  };
  /** In `2026-12-15` also `search`, `bulkUpdate` and `bulkDelete`; in `2026-11-28` neither its type nor the client has them. */
  tasks: TaskMethods<V>;
  events: {
    /** One page of the feed, as the service answers it. */
    page(query?: Query<V, '/v1/events'>): Promise<FeedPage<V>>;
    /** Every event from a position on, as they happen, once each and in order, each with the cursor to store after handling it. */
    follow(options?: FollowOptions<V>): AsyncGenerator<FollowedEvent<V>>;
  };
  webhookEndpoints: {
    /** Registers a URL for the tenant's events; the answer carries the endpoint's secret, shown only here and on rotation. */
    create(
      body: Schemas<V>['WebhookEndpointCreate'],
      options?: CreateOptions,
    ): KitPromise<Schemas<V>['WebhookEndpointWithSecret']>;
    /** Reads an endpoint; `ifNoneMatch` as for a project. */
    get: Read<WebhookEndpoint<V>>;
    /** Changes an endpoint (its URL, its event types, `enabled`); `ifMatch` as for a project. */
    update(
      id: string,
      body: Schemas<V>['WebhookEndpointUpdate'],
      options?: ChangeOptions,
    ): KitPromise<WebhookEndpoint<V>>;
    /** Deletes an endpoint: nothing more is delivered to it. */
    delete(id: string, options?: ChangeOptions): KitPromise<DeleteOutcome>;
    /** The tenant's endpoints, as an async iterable that pages on its own. */
    list(query?: Omit<Query<V, '/v1/webhook-endpoints'>, 'cursor'>): Paginator<WebhookEndpoint<V>>;
    /** A new secret; the one it replaces keeps signing for 24 hours, and a retry with the same Idempotency-Key gets the same secret. */
    rotateSecret(id: string, options?: CreateOptions): KitPromise<Schemas<V>['WebhookSecret']>;
    /** The endpoint's delivery attempts, newest first, as an async iterable that pages on its own. */
    deliveries(
      id: string,
      query?: Omit<Query<V, '/v1/webhook-endpoints/{webhook_endpoint_id}/deliveries'>, 'cursor'>,
    ): Paginator<WebhookDelivery<V>>;
    /** Sends a kept event to the endpoint again. */
    redeliver(id: string, eventId: string): KitPromise<WebhookDelivery<V>>;
  };
}

/**
 * A client in version `V` (default `2026-11-28`): every path of that version's document (GET,
 * POST, … as openapi-fetch gives them), and the resources' methods.
 */
export type TaskTrackerClient<V extends ApiVersion = DefaultApiVersion> = Client<PathsOf<V>> &
  Resources<V>;

/**
 * A client of the service at `baseUrl` with `apiKey`, in `apiVersion` (each from its
 * TASK_TRACKER_ variable in Node when not given). `createClient({ apiVersion: '2026-12-15' })` is
 * typed by that version's document and sends `Api-Version: 2026-12-15`.
 */
export function createClient<V extends ApiVersion = DefaultApiVersion>(
  options: ClientOptions<V> = {},
): TaskTrackerClient<V> {
  const apiVersion = chooseApiVersion(options.apiVersion);
  const baseUrl = given(options.baseUrl, 'baseUrl', 'TASK_TRACKER_URL', "the service's address");
  const apiKey = given(options.apiKey, 'apiKey', 'TASK_TRACKER_API_KEY', 'an API key');
  const policy: RetryPolicy = {
    ...defaultRetryPolicy,
    ...options.retry,
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
  };
  const baseFetch = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const api = createFetchClient<PathsOf<V>>({
    baseUrl: baseUrl.replace(/\/+$/, ''),
    headers: { Authorization: `Bearer ${apiKey}`, 'Api-Version': apiVersion },
    fetch: retryingFetch(policy, baseFetch),
  });
  // The methods are the same in every version but for the types: written (and type-checked)
  // against the newest version's paths, and typed for the client's by Resources<V>; a version
  // without the search and bulk changes has no such methods.
  const resources = resourcesOf(
    api as unknown as Client<PathsOf<NewestApiVersion>>,
    isPlanningVersion(apiVersion) ? retryingFetch(policy, baseFetch, true) : undefined,
  );
  return { ...api, ...(resources as unknown as Resources<V>) };
}

/** An option's value, else its environment variable's; with neither, an error naming both. */
function given(value: string | undefined, option: string, variable: string, what: string): string {
  const chosen = value ?? environmentVariable(variable);
  if (chosen === undefined || chosen === '')
    throw new TypeError(
      `createClient needs ${what}: pass ${option}` +
        (hasEnvironment() ? `, or set ${variable}` : ` (${variable} is read in Node only)`),
    );
  return chosen;
}

type Newest = NewestApiVersion;

/**
 * The resources' methods, over the typed paths of the newest version; the planning methods of
 * tasks only with `readingFetch`, the fetch a search (a read sent as a POST) is retried by.
 */
function resourcesOf(
  api: Client<PathsOf<Newest>>,
  readingFetch?: (request: Request) => Promise<Response>,
): Resources<Newest> {
  /**
   * The data of a successful answer (a project's or task's ETag remembered with it), or the
   * answer's problem thrown; `unchanged` answers a 304.
   */
  function answer<T>(
    call: Promise<{ data?: T; error?: unknown; response: Response }>,
    unchanged?: () => T,
  ): KitPromise<T> {
    const settled = call.then(({ data, error, response }) => {
      if (response.status === 304 && unchanged) return { data: unchanged(), response };
      if (!response.ok) throw problemFrom(response, error);
      rememberETag(data, response);
      return { data: data as T, response };
    });
    const promise = settled.then(({ data }) => data) as KitPromise<T>;
    // A caller who takes only withResponse() handles the rejection there.
    promise.catch(() => {});
    promise.withResponse = () => settled;
    return promise;
  }
  const deleted = (call: Promise<{ response: Response; error?: unknown }>) =>
    answer<DeleteOutcome>(
      call.then((result) => ({
        ...result,
        data:
          result.response.headers.get(outcomeHeader) === 'deleted-or-already-absent'
            ? 'deleted or already absent'
            : 'deleted',
      })),
    );
  /**
   * The Idempotency-Key of a call (the caller's, or one made for it), sent on every attempt, so a
   * retry never changes twice. A header parameter: it compiles only where the document takes it.
   */
  const keyed = (o?: CreateOptions) => ({
    'Idempotency-Key': o?.idempotencyKey ?? newIdempotencyKey(),
  });
  const conditional = (o?: ChangeOptions) =>
    o?.ifMatch !== undefined ? { 'If-Match': conditionValue(o.ifMatch, 'ifMatch') } : {};
  /** A read of one resource, conditional on a copy held when asked. */
  function read<T>(
    get: (
      headers: Record<string, string>,
      id: string,
    ) => Promise<{ data?: T; error?: unknown; response: Response }>,
  ): Read<T> {
    return ((id: string, o?: ReadOptions<T>) => {
      const held = o?.ifNoneMatch;
      if (held === undefined) return answer<T>(get({}, id));
      const headers = { 'If-None-Match': conditionValue(held as ETagOrObject, 'ifNoneMatch') };
      return answer<T | undefined>(get(headers, id), () =>
        typeof held === 'string' ? undefined : held,
      );
    }) as Read<T>;
  }

  const projects = {
    create: (body: Schemas<Newest>['ProjectCreate'], o?: CreateOptions) =>
      answer<Project<Newest>>(api.POST('/v1/projects', { body, params: { header: keyed(o) } })),
    get: read<Project<Newest>>((headers, projectId) =>
      api.GET('/v1/projects/{project_id}', {
        params: { path: { project_id: projectId } },
        headers,
      }),
    ),
    update: (projectId: string, body: Schemas<Newest>['ProjectUpdate'], o?: ChangeOptions) =>
      answer<Project<Newest>>(
        api.PATCH('/v1/projects/{project_id}', {
          params: { path: { project_id: projectId } },
          body,
          headers: conditional(o),
        }),
      ),
    delete: (projectId: string, o?: ChangeOptions) =>
      deleted(
        api.DELETE('/v1/projects/{project_id}', {
          params: { path: { project_id: projectId } },
          headers: conditional(o),
        }),
      ),
    list: (query: Omit<Query<Newest, '/v1/projects'>, 'cursor'> = {}): Paginator<Project<Newest>> =>
      paginate((cursor) =>
        answer(api.GET('/v1/projects', { params: { query: { ...query, cursor } } })),
      ),
  };

  const tasks = {
    create: (body: Schemas<Newest>['TaskCreate'], o?: CreateOptions) =>
      answer<Task<Newest>>(api.POST('/v1/tasks', { body, params: { header: keyed(o) } })),
    get: read<Task<Newest>>((headers, taskId) =>
      api.GET('/v1/tasks/{task_id}', { params: { path: { task_id: taskId } }, headers }),
    ),
    update: (taskId: string, body: Schemas<Newest>['TaskUpdate'], o?: ChangeOptions) =>
      answer<Task<Newest>>(
        api.PATCH('/v1/tasks/{task_id}', {
          params: { path: { task_id: taskId } },
          body,
          headers: conditional(o),
        }),
      ),
    delete: (taskId: string, o?: ChangeOptions) =>
      deleted(
        api.DELETE('/v1/tasks/{task_id}', {
          params: { path: { task_id: taskId } },
          headers: conditional(o),
        }),
      ),
    list: (
      projectId: string,
      query: Omit<Query<Newest, '/v1/projects/{project_id}/tasks'>, 'cursor'> = {},
    ): Paginator<Task<Newest>> =>
      paginate((cursor) =>
        answer(
          api.GET('/v1/projects/{project_id}/tasks', {
            params: { path: { project_id: projectId }, query: { ...query, cursor } },
          }),
        ),
      ),
  };

  const bulkBody = ({ dryRun, ...tasks }: BulkTasks<Newest>) => ({
    ...tasks,
    dry_run: dryRun ?? false,
  });
  const planning = (fetchToRead: typeof readingFetch): PlanningMethods<Newest> => ({
    search: (filter, options = {}) =>
      paginate((cursor) =>
        answer(
          api.POST('/v1/tasks/search', {
            body: { ...options, filter, cursor },
            fetch: fetchToRead,
          }),
        ),
      ),
    bulkUpdate: ({ changes, ...tasks }, o) =>
      answer(
        api.POST('/v1/tasks/bulk-update', {
          body: { ...bulkBody(tasks), changes },
          params: { header: keyed(o) },
        }),
      ),
    bulkDelete: (tasks, o) =>
      answer(
        api.POST('/v1/tasks/bulk-delete', { body: bulkBody(tasks), params: { header: keyed(o) } }),
      ),
  });

  const readFeedPage = (query: Query<Newest, '/v1/events'>, signal?: AbortSignal) =>
    answer(api.GET('/v1/events', { params: { query }, signal })) as Promise<FeedPage<Newest>>;
  const events = {
    /** One page of the feed, as the service answers it. */
    page: (query: Query<Newest, '/v1/events'> = {}) => readFeedPage(query),
    /** Every event from a position on, as they happen: see FollowOptions. */
    follow: (o: FollowOptions<Newest> = {}): AsyncGenerator<FollowedEvent<Newest>> =>
      follow(readFeedPage as FeedPageReader<Newest>, o),
  };

  const endpointPath = (id: string) => ({ path: { webhook_endpoint_id: id } });
  const webhookEndpoints = {
    /** The answer carries the endpoint's secret, shown only here and on rotation. */
    create: (body: Schemas<Newest>['WebhookEndpointCreate'], o?: CreateOptions) =>
      answer<Schemas<Newest>['WebhookEndpointWithSecret']>(
        api.POST('/v1/webhook-endpoints', { body, params: { header: keyed(o) } }),
      ),
    get: read<WebhookEndpoint<Newest>>((headers, id) =>
      api.GET('/v1/webhook-endpoints/{webhook_endpoint_id}', { params: endpointPath(id), headers }),
    ),
    update: (id: string, body: Schemas<Newest>['WebhookEndpointUpdate'], o?: ChangeOptions) =>
      answer<WebhookEndpoint<Newest>>(
        api.PATCH('/v1/webhook-endpoints/{webhook_endpoint_id}', {
          params: endpointPath(id),
          body,
          headers: conditional(o),
        }),
      ),
    delete: (id: string, o?: ChangeOptions) =>
      deleted(
        api.DELETE('/v1/webhook-endpoints/{webhook_endpoint_id}', {
          params: endpointPath(id),
          headers: conditional(o),
        }),
      ),
    list: (
      query: Omit<Query<Newest, '/v1/webhook-endpoints'>, 'cursor'> = {},
    ): Paginator<WebhookEndpoint<Newest>> =>
      paginate((cursor) =>
        answer(api.GET('/v1/webhook-endpoints', { params: { query: { ...query, cursor } } })),
      ),
    rotateSecret: (id: string, o?: CreateOptions) =>
      answer(
        api.POST('/v1/webhook-endpoints/{webhook_endpoint_id}/rotate-secret', {
          params: { ...endpointPath(id), header: keyed(o) },
        }),
      ),
    deliveries: (
      id: string,
      query: Omit<
        Query<Newest, '/v1/webhook-endpoints/{webhook_endpoint_id}/deliveries'>,
        'cursor'
      > = {},
    ): Paginator<WebhookDelivery<Newest>> =>
      paginate((cursor) =>
        answer(
          api.GET('/v1/webhook-endpoints/{webhook_endpoint_id}/deliveries', {
            params: { ...endpointPath(id), query: { ...query, cursor } },
          }),
        ),
      ),
    redeliver: (id: string, eventId: string) =>
      answer<WebhookDelivery<Newest>>(
        api.POST('/v1/webhook-endpoints/{webhook_endpoint_id}/deliveries', {
          params: endpointPath(id),
          body: { event_id: eventId },
        }),
      ),
  };

  return {
    projects,
    // Without them for a version that lacks them, as TaskMethods<V> types that version's client.
    tasks: (readingFetch ? { ...tasks, ...planning(readingFetch) } : tasks) as TaskMethods<Newest>,
    events,
    webhookEndpoints,
  };
}
