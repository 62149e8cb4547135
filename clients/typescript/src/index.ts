/** `@task-tracker/client`: see the README's "For client teams". Webhook verification is in `@task-tracker/client/webhooks`. */
export {
  createClient,
  type ClientOptions,
  type CreateOptions,
  type ChangeOptions,
  type DeleteOutcome,
  type KitPromise,
  type Read,
  type ReadOptions,
  type TaskTrackerClient,
} from './client';
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
export type {
  Event,
  EventType,
  Project,
  Task,
  TypedEvent,
  WebhookDelivery,
  WebhookEndpoint,
} from './types';
export type { components, paths } from './api';
