/**
 * Requests, answers and events between a version and the newest: the service works in the newest
 * version only, so a request of an older version is brought up to it before it is handled, and
 * an answer or an event is brought down to the reader's version after.
 */
import type { JsonObject, VersionedAnswer, VersionedRequest } from './change';
import { changesSince, versions, type SupportedVersion } from './versions';

/** `inPlace`: the caller's own copy, changed where it is rather than copied first. */
export interface Ownership {
  inPlace?: boolean;
}

/** A request of `version` as the newest version would have it (the changes redone, oldest first). */
export function requestUp(
  version: string,
  request: VersionedRequest,
  registry: readonly SupportedVersion[] = versions,
): VersionedRequest {
  let up = structuredClone(request);
  for (const change of [...changesSince(version, registry)].reverse())
    if (change.request) up = change.request(up);
  return up;
}

/** An answer of the newest version as `version` gives it (the changes undone, newest first). */
export function answerDown(
  version: string,
  answer: VersionedAnswer,
  registry: readonly SupportedVersion[] = versions,
  { inPlace = false }: Ownership = {},
): VersionedAnswer {
  let down = inPlace ? answer : structuredClone(answer);
  for (const change of changesSince(version, registry))
    if (change.answer) down = change.answer(down);
  return down;
}

/** An event, stored in the newest version's shape, as `version` shows it. */
export function eventDown(
  version: string,
  event: JsonObject,
  registry: readonly SupportedVersion[] = versions,
  { inPlace = false }: Ownership = {},
): JsonObject {
  let down = inPlace ? event : structuredClone(event);
  for (const change of changesSince(version, registry)) if (change.event) down = change.event(down);
  return down;
}
