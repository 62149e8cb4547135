/**
 * The API versions this kit holds, side by side: each version's types, generated from its own
 * document (api.ts from the newest, openapi/openapi.yaml; api-VERSION.ts from each older one's,
 * openapi/versions/VERSION.yaml). A new version is a line in `apiVersions` and one in `Versions`.
 */
import type * as v2026_12_15 from './api';
import type * as v2026_11_28 from './api-2026-11-28';
import { environmentVariable } from './environment';

/** The versions the kit knows, newest first. */
export const apiVersions = ['2026-12-15', '2026-11-28'] as const;

/** A version the kit knows, `YYYY-MM-DD`: what it sends as `Api-Version`. */
export type ApiVersion = (typeof apiVersions)[number];

/**
 * The version a client is in when its program names none (no `apiVersion`, no
 * `TASK_TRACKER_API_VERSION`): `2026-11-28`, the version every client had before versions, so no
 * existing program changes. The types without a version argument are this version's.
 */
export const defaultApiVersion = '2026-11-28' satisfies ApiVersion;
export type DefaultApiVersion = typeof defaultApiVersion;

/** The newest version the kit knows: the one its resource methods are written against. */
export type NewestApiVersion = (typeof apiVersions)[0];

/** Each version's generated types: its document's `paths` and `components`. */
export interface Versions {
  '2026-12-15': { paths: v2026_12_15.paths; components: v2026_12_15.components };
  '2026-11-28': { paths: v2026_11_28.paths; components: v2026_11_28.components };
}

/** A version's paths, as openapi-fetch takes them. */
export type PathsOf<V extends ApiVersion> = Versions[V]['paths'];
/** A version's components: `ComponentsOf<'2026-12-15'>['schemas']['Task']`. */
export type ComponentsOf<V extends ApiVersion> = Versions[V]['components'];

/**
 * The versions whose documents have the search and the bulk changes of tasks (`2026-12-15` on):
 * a client in one of these has `tasks.search`, `tasks.bulkUpdate` and `tasks.bulkDelete`, in its
 * type and at run time; one in another version has neither.
 */
export type PlanningVersion = {
  [V in ApiVersion]: '/v1/tasks/search' extends keyof PathsOf<V> ? V : never;
}[ApiVersion];
export const planningVersions = ['2026-12-15'] as const satisfies readonly PlanningVersion[];

export function isPlanningVersion(version: ApiVersion): version is PlanningVersion {
  return (planningVersions as readonly ApiVersion[]).includes(version);
}

export function isApiVersion(value: unknown): value is ApiVersion {
  return (apiVersions as readonly unknown[]).includes(value);
}

/**
 * The version a client is made in: `apiVersion` when given, else TASK_TRACKER_API_VERSION when
 * set (in Node), else the default. One the kit does not know is an error naming those it does.
 */
export function chooseApiVersion(apiVersion: string | undefined): ApiVersion {
  const fromEnvironment = environmentVariable('TASK_TRACKER_API_VERSION');
  const [version, source] =
    apiVersion !== undefined
      ? [apiVersion, 'apiVersion']
      : fromEnvironment
        ? [fromEnvironment, 'TASK_TRACKER_API_VERSION']
        : [defaultApiVersion, 'the default'];
  if (!isApiVersion(version))
    throw new RangeError(
      `${source} ${JSON.stringify(version)} is not an API version this kit knows: ` +
        `it knows ${apiVersions.join(', ')}.`,
    );
  return version;
}

// Every version the kit knows has its types, and every version with types is known (a
// compile-time check: a version missing from either list is the type of this constant).
type Unmatched = Exclude<ApiVersion, keyof Versions> | Exclude<keyof Versions, ApiVersion>;
export const everyVersionIsTyped: [Unmatched] extends [never] ? true : Unmatched = true;

// The run-time list of planning versions is the typed one: a version whose document has the
// search but is missing from planningVersions is the type of this constant.
type Unlisted = Exclude<PlanningVersion, (typeof planningVersions)[number]>;
export const everyPlanningVersionIsListed: [Unlisted] extends [never] ? true : Unlisted = true;
