/**
 * Every operation of the document with its handler, and the checks some changes make before
 * their transaction opens: what the service does, by resource. A new resource's handlers join
 * here; the router registers whatever this gives.
 */
import type { CoreRepositories } from '../db/repositories';
import type { EventRepositories } from '../events/repositories';
import type { FeedWatcher } from '../events/feed-watcher';
import type { WebhookRepositories } from '../webhooks/repositories';
import type { TargetGuard } from '../webhooks/target-guard';
import { bulkTaskChecks, bulkTaskHandlers, type BulkFences } from './bulk-tasks';
import { eventHandlers } from './events';
import type { OperationChecks, OperationHandlers } from './operation';
import { projectHandlers } from './projects';
import { taskHandlers } from './tasks';
import { webhookChecks, webhookHandlers, type WebhookFences } from './webhooks';

/** What the handlers use of every repository: the core resources' and each feature's. */
export type HandlerRepositories = CoreRepositories & EventRepositories & WebhookRepositories;

export interface HandlerParts {
  repositories: HandlerRepositories;
  feed: FeedWatcher;
  webhookTargets: TargetGuard;
  webhookFences: WebhookFences;
  bulkFences: BulkFences;
}

export function operationHandlers({
  repositories,
  feed,
  webhookTargets,
  webhookFences,
  bulkFences,
}: HandlerParts): {
  handlers: OperationHandlers;
  checks: OperationChecks;
} {
  return {
    handlers: {
      ...projectHandlers(repositories),
      ...taskHandlers(repositories),
      ...bulkTaskHandlers(repositories),
      ...eventHandlers(repositories, feed),
      ...webhookHandlers(repositories, webhookFences),
    },
    checks: {
      ...webhookChecks(webhookTargets, webhookFences),
      ...bulkTaskChecks(repositories, bulkFences),
    },
  };
}
