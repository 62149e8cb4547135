/**
 * The gate: every supported version that was released as a document is made, from the newest
 * document and the changes since, into exactly that document, prose aside, but for the
 * differences the allow-list names. So a change to the newest document that a released version
 * would see, without a change module that undoes it for that version, fails.
 */
import type { JsonObject } from './change';
import type { AllowedDifference } from './allowed-differences';
import { diffDocuments, type Difference } from './document-diff';
import { documentFor } from './documents';
import { versions, type SupportedVersion } from './versions';

export interface GateResult {
  /** The versions compared, with the released document each was compared with. */
  compared: { version: string; released: string }[];
  /** Differences that no entry of the allow-list names. */
  unexplained: { version: string; difference: Difference }[];
  /** Entries that name no difference: each is an error too, so the list says only what is true. */
  staleEntries: AllowedDifference[];
}

export function runGate(
  newestDocument: JsonObject,
  allowList: readonly AllowedDifference[],
  readReleased: (file: string) => JsonObject,
  registry: readonly SupportedVersion[] = versions,
): GateResult {
  const result: GateResult = { compared: [], unexplained: [], staleEntries: [] };
  const used = new Set<AllowedDifference>();
  for (const { version, released } of registry) {
    if (released === undefined) continue;
    result.compared.push({ version, released });
    const made = documentFor(version, newestDocument, registry);
    for (const difference of diffDocuments(readReleased(released), made)) {
      const entry = allowList.find(
        (allowed) =>
          allowed.version === version &&
          allowed.pointer === difference.pointer &&
          allowed.kind === difference.kind,
      );
      if (entry === undefined) result.unexplained.push({ version, difference });
      else used.add(entry);
    }
  }
  result.staleEntries = allowList.filter((entry) => !used.has(entry));
  return result;
}
