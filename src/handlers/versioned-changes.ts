/**
 * The update and the delete of a resource that carries versions (ETags): the same for projects,
 * tasks and webhook endpoints but for the repository and the resource's name.
 */
import type { Principal } from '../db/api-keys-repository';
import type { WriteContext } from '../db/transactions';
import type { VersionCondition, Versioned } from '../db/versioned';
import type { ResourceName } from '../errors';
import { versionsAccepted } from './entity-tags';
import { found, removed, replyWith } from './operation';

interface VersionedRepository<Resource, Changes> {
  update(
    tenantId: string,
    id: string,
    changes: Changes,
    condition: VersionCondition,
    write: WriteContext,
  ): Promise<Versioned<Resource> | undefined>;
  remove(
    tenantId: string,
    id: string,
    condition: VersionCondition,
    write: WriteContext,
  ): Promise<boolean>;
}

/** What a change reads of its request: who asks, its If-Match, and its transaction. */
interface ChangeInput {
  principal: Principal;
  headers: { 'If-Match'?: string };
  write: WriteContext;
}

/** The update and delete handlers of a resource whose id is the path parameter `idParameter`. */
export function versionedChanges<Resource, Changes, Id extends string>(
  repository: VersionedRepository<Resource, Changes>,
  resource: ResourceName,
  idParameter: Id,
) {
  type Input = ChangeInput & { path: Record<Id, string> };
  return {
    /** 200 with the resource as changed; 404 when the tenant has no such resource, 412 when If-Match fails. */
    async update({ principal, path, headers, body, write }: Input & { body: Changes }) {
      const id = path[idParameter];
      const condition = versionsAccepted(headers['If-Match']);
      const changed = await repository.update(principal.tenantId, id, body, condition, write);
      return replyWith(200, found(changed, resource, id));
    },

    /** 204; 404 when the tenant has no such resource, 412 when If-Match fails. */
    async remove({ principal, path, headers, write }: Input) {
      const id = path[idParameter];
      const condition = versionsAccepted(headers['If-Match']);
      return removed(
        await repository.remove(principal.tenantId, id, condition, write),
        resource,
        id,
      );
    },
  };
}
