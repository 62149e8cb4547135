/**
 * Requests, answers and events between a version and the newest: the service works in the newest
 * version only, so a request of an older version is brought up to it before it is handled, and
 * an answer or an event is brought down to the reader's version after.
 */
import type { JsonObject, VersionedAnswer, VersionedRequest } from './change';
import { changesSince, versions, type SupportedVersion } from './versions';

/** A request of `version` as the newest version would have it (the changes redone, oldest first). */
export function requestUp(
  version: string,
  request: VersionedRequest,
  registry: readonly SupportedVersion[] = versions,
): VersionedRequest {
  let up = structuredClone(request);
  for (const change of changesSince(version, registry).reverse())
    if (change.request) up = change.request(up);
  return up;
}

/** An answer of the newest version as `version` gives it (the changes undone, newest first). */
export function answerDown(
  version: string,
  answer: VersionedAnswer,
  registry: readonly SupportedVersion[] = versions,
): VersionedAnswer {
  let down = structuredClone(answer);
  for (const change of changesSince(version, registry))
    if (change.answer) down = change.answer(down);
  return down;
}

/** An event, stored in the newest version's shape, as `version` shows it. */
export function eventDown(
  version: string,
  event: JsonObject,
  registry: readonly SupportedVersion[] = versions,
): JsonObject {
  let down = structuredClone(event);
  for (const change of changesSince(version, registry)) if (change.event) down = change.event(down);
  return down;
}
