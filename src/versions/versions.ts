/**
 * The supported API versions, newest first, each with the changes it introduced. A breaking change
 * is a module in src/versions/changes/ (see change.ts), listed in the `changes` of the version
 * that introduced it; `npm run -s versions -- write` then makes the older versions' documents.
 */
import type { VersionChange } from './change';
import { bulkChanges } from './changes/bulk-changes';
import { cancelledTasks } from './changes/cancelled-tasks';
import { planningFields } from './changes/planning-fields';
import { planningLists } from './changes/planning-lists';
import { taskSearch } from './changes/task-search';
import { webhookEndpointVersions } from './changes/webhook-endpoint-versions';
import { webhookSubscriptions } from './changes/webhook-subscriptions';

export interface SupportedVersion {
  /** `YYYY-MM-DD`: what `Api-Version` names. */
  readonly version: string;
  readonly releasedOn: string;
  readonly status: 'supported' | 'deprecated';
  /**
   * The changes this version made to the one before it. Going down to an older version they are
   * undone in this order (the documents, answers and events), going up redone in the reverse.
   */
  readonly changes: readonly VersionChange[];
  /** The released document (from the project's root) its made document must equal: the gate. */
  readonly released?: string;
}

export const versions: readonly SupportedVersion[] = [
  {
    version: '2026-12-15',
    releasedOn: '2026-12-15',
    status: 'supported',
    // Undone in this order. webhookSubscriptions refers to taskSearch's TaskFilter: undone before
    // it. planningFields before cancelledTasks: a task's last fields are deleted first, which
    // keeps its fast layout (planning-fields.ts).
    changes: [
      webhookEndpointVersions,
      planningFields,
      cancelledTasks,
      planningLists,
      webhookSubscriptions,
      taskSearch,
      bulkChanges,
    ],
  },
  {
    // The contract of document 1.5.0, exactly as released: the interface's own version.
    version: '2026-11-28',
    releasedOn: '2026-11-28',
    status: 'supported',
    changes: [],
    released: 'openapi/released/1.5.0.yaml',
  },
];

/** A supported version's date, `YYYY-MM-DD`. */
export type ApiVersion = string;

/** The supported versions' dates, newest first. */
export const supportedVersions: readonly ApiVersion[] = versions.map((entry) => entry.version);

/** What a tenant made now is pinned to. */
export const newestVersion: ApiVersion = versions[0].version;

/** What tenants, keys and webhook endpoints made before versions existed are pinned to. */
export const versionBeforeVersions = '2026-11-28';

export function isSupportedVersion(value: string): boolean {
  return versions.some((entry) => entry.version === value);
}

/**
 * The changes between `version` and the newest of `registry`, in the order that undoes them
 * (newest version first; within a version, its list's order). An unknown version is an error.
 */
export function changesSince(
  version: string,
  registry: readonly SupportedVersion[] = versions,
): readonly VersionChange[] {
  // Asked for at every answer and event of an older version: worked out once per version.
  let byVersion = changesOf.get(registry);
  if (byVersion === undefined) changesOf.set(registry, (byVersion = new Map()));
  let changes = byVersion.get(version);
  if (changes === undefined) {
    const index = registry.findIndex((entry) => entry.version === version);
    if (index < 0) throw new Error(`${version} is not a supported version`);
    changes = registry.slice(0, index).flatMap((entry) => entry.changes);
    byVersion.set(version, changes);
  }
  return changes;
}

const changesOf = new WeakMap<readonly SupportedVersion[], Map<string, readonly VersionChange[]>>();
