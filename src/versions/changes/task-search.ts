/**
 * Version 2026-12-15: `TaskFilter`, a typed filter of tasks, and `POST /v1/tasks/search`, which
 * finds the tenant's tasks across its projects by one. Version 2026-11-28 has neither: its
 * document has no such operation or schemas, and a search made in it answers 404 as any path it
 * does not have.
 */
import { objectAt, type VersionChange } from '../change';

/** The schemas of the filter and the search, which nothing older refers to. */
const schemas = [
  'TaskFilter',
  'TaskFilterAll',
  'TaskFilterAny',
  'TaskFilterNot',
  'TaskFilterProjectId',
  'TaskFilterStatus',
  'TaskFilterPriority',
  'TaskFilterAssignee',
  'TaskFilterLabels',
  'TaskFilterDueOn',
  'TaskFilterCreatedAt',
  'TaskFilterUpdatedAt',
  'TaskFilterText',
  'FilterDate',
  'FilterMoments',
  'TaskSearch',
];

export const taskSearch: VersionChange = {
  sentence:
    "A `TaskFilter` (combinators `all`, `any`, `not`; operators on `project_id`, `status`, `priority`, `assignee`, `labels`, `due_on`, `created_at`, `updated_at`; and `text`) finds tasks, and `POST /v1/tasks/search` answers a page of the tenant's tasks across its projects that match one; earlier versions have neither.",

  document(newer) {
    const paths = objectAt(newer, '/paths');
    if (paths['/v1/tasks/search'] === undefined) throw new Error('no path /v1/tasks/search');
    delete paths['/v1/tasks/search'];
    const components = objectAt(newer, '/components/schemas');
    for (const schema of schemas) {
      if (components[schema] === undefined) throw new Error(`no schema ${schema}`);
      delete components[schema];
    }
    return newer;
  },
};
