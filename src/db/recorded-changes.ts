/**
 * A versioned resource's update and delete, each recording its event in the change's
 * transaction: projects and tasks differ only in their name, their rows and their queries.
 */
import type { components } from '../../generated/api';
import { changedFields, type EventLog } from './event-log';
import type { DbTimestamp } from './timestamps';
import type { WriteContext } from './transactions';
import {
  changeVersioned,
  deleteVersioned,
  type LockingRead,
  type Scoped,
  type VersionCondition,
  type Versioned,
  type VersionedRow,
} from './versioned';

type Project = components['schemas']['Project'];
type Task = components['schemas']['Task'];

export function recordedChanges<
  Row extends VersionedRow,
  Resource extends Project | Task,
  Changes extends object,
>(
  events: EventLog,
  spec: {
    resource: 'project' | 'task';
    toResource: (row: Row) => Resource;
    /** The project a change of the resource belongs to (a project's own id). */
    projectOf: (resource: Resource) => string;
    scoped: (tenantId: string, id: string) => Scoped;
    locked: (tenantId: string, id: string) => LockingRead<Row>;
    /** Columns that follow from the row as it was and the changes (a task's completed_at). */
    derived?: (before: Row, changes: Changes, updatedAt: DbTimestamp) => Partial<Row>;
  },
) {
  const { resource, toResource, projectOf, scoped, locked, derived } = spec;
  return {
    /** Applies the changes; undefined when the tenant has no such resource, 412 when the condition fails. */
    async update(
      tenantId: string,
      id: string,
      changes: Changes,
      condition: VersionCondition,
      write: WriteContext,
    ): Promise<Versioned<Resource> | undefined> {
      const change = await changeVersioned(
        write.trx,
        scoped(tenantId, id),
        locked(tenantId, id),
        derived
          ? (before: Row, updatedAt: DbTimestamp) => ({
              ...changes,
              ...derived(before, changes, updatedAt),
            })
          : changes,
        condition,
        resource,
      );
      if (change === undefined) return undefined;
      const before = toResource(change.before);
      const after = { value: toResource(change.after), version: change.after.version };
      await events.record(write, {
        tenantId,
        type: `${resource}.updated`,
        projectId: projectOf(before),
        object: after.value,
        previous: changedFields(before, after.value),
      });
      return after;
    },

    /** Deletes it; false when the tenant has no such resource, 412 when the condition fails. */
    async remove(
      tenantId: string,
      id: string,
      condition: VersionCondition,
      write: WriteContext,
    ): Promise<boolean> {
      const removed = await deleteVersioned(
        write.trx,
        scoped(tenantId, id),
        locked(tenantId, id),
        condition,
        resource,
      );
      if (removed === undefined) return false;
      const object = toResource(removed);
      await events.record(write, {
        tenantId,
        type: `${resource}.deleted`,
        projectId: projectOf(object),
        object,
      });
      return true;
    },
  };
}
