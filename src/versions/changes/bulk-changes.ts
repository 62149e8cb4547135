/**
 * Version 2026-12-15: `POST /v1/tasks/bulk-update` and `POST /v1/tasks/bulk-delete` change or
 * delete up to 1,000 tasks at once, all or nothing. Version 2026-11-28 has neither: its document
 * has no such paths, schemas, responses or problem types, and a request for one is answered as
 * 1.5.0 answered it (a POST to /v1/tasks/{task_id}: 405 with its Allow).
 */
import { objectAt, removeProperty, type JsonObject, type VersionChange } from '../change';

const paths = ['/v1/tasks/bulk-update', '/v1/tasks/bulk-delete'];
const schemas = [
  'TaskIdList',
  'DryRun',
  'TaskBulkChanges',
  'TaskBulkUpdate',
  'TaskBulkDelete',
  'TaskBulkResult',
];
const responses = [
  'BulkBadRequest',
  'UnprocessableBulkChange',
  'BulkDeleteBadRequest',
  'UnprocessableBulkDelete',
  'TooManyBulkChanges',
];
const examples = ['TaskBulkResult', 'TaskBulkDryRun'];

/** The rows of the Problem schema's table as 2026-11-28 has them: `[newest, older]`, older null when the row is new. */
const problemRows: ReadonlyArray<readonly [string, string | null]> = [
  [
    '| `/problems/limit-reached` | 422 | the tenant has as many webhook endpoints as it may, or a bulk change would give a task more than 20 labels; `limit` gives the limit |\n',
    '| `/problems/limit-reached` | 422 | the tenant has as many webhook endpoints as it may; `limit` gives the limit |\n',
  ],
  [
    '| `/problems/too-many-tasks` | 422 | a bulk change names (or its filter matches) more than 1,000 tasks; `matched` says how many, `limit` the most |\n',
    null,
  ],
  [
    ', the tenant its webhook endpoint changes for the minute, or the tenant (or the instance) runs as many bulk changes as it may at once |',
    ', or the tenant its webhook endpoint changes for the minute |',
  ],
];

/** Deletes each named member of the object at `pointer`, failing on one that is not there. */
function removeAll(document: JsonObject, pointer: string, names: readonly string[]): void {
  const at = objectAt(document, pointer);
  for (const name of names) {
    if (at[name] === undefined) throw new Error(`${pointer} has no ${name}`);
    delete at[name];
  }
}

export const bulkChanges: VersionChange = {
  sentence:
    '`POST /v1/tasks/bulk-update` and `POST /v1/tasks/bulk-delete` change or delete up to 1,000 tasks at once, all or nothing, each changed task with its own event; earlier versions have neither.',

  document(newer) {
    removeAll(newer, '/paths', paths);
    removeAll(newer, '/components/schemas', schemas);
    removeAll(newer, '/components/responses', responses);
    removeAll(newer, '/components/examples', examples);
    removeProperty(newer, '/components/schemas/Problem', 'matched');
    const problem = objectAt(newer, '/components/schemas/Problem');
    const limit = objectAt(newer, '/components/schemas/Problem/properties/limit');
    limit.description = 'Present for `/problems/limit-reached`: the limit that was reached.';
    // Prose, which the gate does not compare: put back where it is as written, left alone else.
    let table = String(problem.description);
    for (const [row, older] of problemRows) table = table.replace(row, older ?? '');
    problem.description = table;
    const info = objectAt(newer, '/info');
    info.description = String(info.description).replace(
      '`Idempotency-Key` (as do the bulk changes of tasks), so',
      '`Idempotency-Key`, so',
    );
    return newer;
  },
};
