/**
 * Bulk changes of tasks (version 2026-12-15): `updateTasksInBulk` and `deleteTasksInBulk`. Before
 * its transaction a call is checked, takes a place among the bulk changes running (429 past the
 * tenant's or the instance's bound, app/bulk-fence.ts), and is counted against its key's limit as
 * one request per 100 tasks; the place is given back once it has answered.
 */
import type { Release } from '../app/bulk-fence';
import type { Principal } from '../db/api-keys-repository';
import type { CoreRepositories } from '../db/repositories';
import type { BulkOutcome, TaskSelection } from '../db/tasks-bulk-repository';
import { checkTaskFilter } from '../db/task-filter';
import { labelFold } from '../db/task-planning';
import { bulkTaskLimit, InvalidFieldError, TooManyTasksError } from '../errors';
import type { CheckInput, OperationChecks, OperationHandler, OperationInput } from './operation';

/** What bounds bulk changes besides their own size and the key's rate limit. */
export interface BulkFences {
  /** Takes a place for one of the tenant's bulk changes; a 429 problem when there is none. */
  enter(tenantId: string): Promise<Release>;
}

/** A bulk change counts as one request per this many tasks. */
const tasksPerRequest = 100;
/** The answer lists the first this many tasks changed. */
const listedTasks = 100;

type BulkBody = OperationInput<'updateTasksInBulk' | 'deleteTasksInBulk'>['body'];

/** The tasks the body names or filters, exactly one of the two: a 400 naming the place else. */
function selectionOf(body: BulkBody): TaskSelection {
  if (body.task_ids !== undefined && body.filter !== undefined)
    throw new InvalidFieldError('/filter', 'cannot go with task_ids: send one of them');
  if (body.filter !== undefined) return { filter: checkTaskFilter(body.filter, '/filter') };
  if (body.task_ids === undefined)
    throw new InvalidFieldError('/task_ids', 'is required (or a filter instead): name the tasks');
  return { taskIds: body.task_ids };
}

function answerOf(outcome: BulkOutcome, dryRun: boolean) {
  return {
    status: 200 as const,
    body: {
      matched: outcome.matched,
      changed: outcome.changed.length,
      task_ids: outcome.changed.slice(0, listedTasks),
      dry_run: dryRun,
    },
  };
}

export function bulkTaskHandlers({ tasksBulk }: CoreRepositories) {
  const updateTasksInBulk: OperationHandler<'updateTasksInBulk'> = async ({
    principal,
    body,
    write,
  }) => {
    const dryRun = body.dry_run === true;
    const outcome = await tasksBulk.update(
      principal.tenantId,
      selectionOf(body),
      body.changes,
      dryRun,
      write,
    );
    return answerOf(outcome, dryRun);
  };

  const deleteTasksInBulk: OperationHandler<'deleteTasksInBulk'> = async ({
    principal,
    body,
    write,
  }) => {
    const dryRun = body.dry_run === true;
    const outcome = await tasksBulk.remove(principal.tenantId, selectionOf(body), dryRun, write);
    return answerOf(outcome, dryRun);
  };

  return { updateTasksInBulk, deleteTasksInBulk };
}

/** A label both added and taken off is a 400 naming it where it is taken off. */
function refuseLabelsInBoth(changes: OperationInput<'updateTasksInBulk'>['body']['changes']): void {
  const added = new Set((changes.labels_add ?? []).map(labelFold));
  const index = (changes.labels_remove ?? []).findIndex((label) => added.has(labelFold(label)));
  if (index >= 0)
    throw new InvalidFieldError(
      `/changes/labels_remove/${index}`,
      'is in labels_add too: a label cannot be added and taken off at once',
    );
}

export function bulkTaskChecks(
  { tasksBulk }: Pick<CoreRepositories, 'tasksBulk'>,
  fences: BulkFences,
): OperationChecks {
  /**
   * Takes the call's place, then counts it by the tasks it names or its filter matches now (the
   * transaction finds them again, and refuses more than the limit then too); the place to give
   * back once it has answered.
   */
  async function admit(
    principal: Principal,
    body: BulkBody,
    countMore: CheckInput['countMore'],
  ): Promise<Release> {
    const selection = selectionOf(body);
    if ('taskIds' in selection && new Set(selection.taskIds).size > bulkTaskLimit)
      throw new TooManyTasksError(new Set(selection.taskIds).size);
    const release = await fences.enter(principal.tenantId);
    try {
      const tasks = await tasksBulk.size(principal.tenantId, selection);
      if (tasks > bulkTaskLimit) throw new TooManyTasksError(tasks);
      const requests = Math.ceil(tasks / tasksPerRequest);
      if (requests > 1)
        await countMore(requests - 1, `a bulk change of ${tasks} tasks counts as ${requests}`);
    } catch (error) {
      await release();
      throw error;
    }
    return release;
  }

  return {
    updateTasksInBulk: async ({ principal, body, countMore }) => {
      refuseLabelsInBoth(body.changes);
      return admit(principal, body, countMore);
    },
    deleteTasksInBulk: ({ principal, body, countMore }) => admit(principal, body, countMore),
  };
}
