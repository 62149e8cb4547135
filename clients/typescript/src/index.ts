/** `@task-tracker/client`: see the README's "For client teams". Webhook verification is in `@task-tracker/client/webhooks`. */
export {
  createClient,
  type ClientOptions,
  type CreateOptions,
  type ChangeOptions,
  type DeleteOutcome,
  type FeedPage,
  type KitPromise,
  type Read,
  type ReadOptions,
  type Resources,
  type TaskTrackerClient,
  type TaskMethods,
  type EveryVersionTaskMethods,
  type PlanningMethods,
  type SearchOptions,
  type BulkTasks,
  type BulkUpdate,
} from './client';
export {
  apiVersions,
  defaultApiVersion,
  type ApiVersion,
  type ComponentsOf,
  type DefaultApiVersion,
  type NewestApiVersion,
  type PathsOf,
  type PlanningVersion,
  type Versions,
} from './versions';
import type { ComponentsOf, DefaultApiVersion, PathsOf } from './versions';
export { etagOf, type ETagOrObject } from './etags';
export { AnswerLostError } from './retry';
export {
  ProblemError,
  isProblem,
  problemTypes,
  type Problem,
  type ProblemType,
  type ValidationIssue,
} from './problems';
export { CursorExpiredError, cursorAfter, type FollowOptions, type FollowedEvent } from './follow';
export type { Page, Paginator } from './paging';
/**
 * The schemas, each in a version: `Task<'2026-12-15'>`; without a version argument, the default
 * version's, `2026-11-28` (`Task` is `Task<'2026-11-28'>`).
 */
export type {
  Event,
  EventType,
  Project,
  Task,
  TaskBulkResult,
  TaskFilter,
  TypedEvent,
  WebhookDelivery,
  WebhookEndpoint,
} from './types';
/**
 * The default version's (`2026-11-28`) paths and components, as openapi-fetch and
 * openapi-typescript give them; another version's are `PathsOf<V>` and `ComponentsOf<V>`.
 */
export type paths = PathsOf<DefaultApiVersion>;
export type components = ComponentsOf<DefaultApiVersion>;
