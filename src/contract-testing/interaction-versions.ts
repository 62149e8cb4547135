/**
 * The API version of a pact's interaction: its request's `Api-Version` header, else the version
 * the verification is told (`--api-version`), else 2026-11-28, the version every client had
 * before versions existed.
 */
import { versionBeforeVersions } from '../versions/versions';

export const defaultInteractionVersion = versionBeforeVersions;

/** A header's value in a pact request (V2/V3 a string, V4 a list), whatever its name's case. */
function headerOf(headers: unknown, name: string): string | undefined {
  if (!headers || typeof headers !== 'object') return undefined;
  for (const [key, value] of Object.entries(headers as Record<string, unknown>))
    if (key.toLowerCase() === name.toLowerCase()) {
      const first = Array.isArray(value) ? value[0] : value;
      return typeof first === 'string' ? first : undefined;
    }
  return undefined;
}

export function interactionVersion(
  interaction: { request?: { headers?: unknown } },
  fallback: string = defaultInteractionVersion,
): string {
  return headerOf(interaction.request?.headers, 'Api-Version') ?? fallback;
}
