/**
 * The changelog of the API versions, docs/api-versions.md, made from the registry and its change
 * modules (their sentences) by `npm run -s versions -- write`, and checked like the made
 * documents: a version's entry can only say what its modules do.
 */
import type { SupportedVersion } from './versions';

export const changelogFile = 'docs/api-versions.md';

export function changelogText(registry: readonly SupportedVersion[]): string {
  const lines = [
    '# API versions',
    '',
    '<!-- Made by `npm run -s versions -- write` from src/versions/: do not edit. -->',
    '',
    'Each version, newest first, with what it changed from the one before. A request names its',
    "version with `Api-Version: YYYY-MM-DD`; without one it is answered in its key's (README.md,",
    '"API versions"). `GET /versions` answers the same list as JSON, and',
    "`GET /openapi/VERSION.yaml` each version's document.",
  ];
  for (const entry of registry) {
    lines.push('', `## ${entry.version}`, '');
    lines.push(`Released on ${entry.releasedOn}; ${entry.status}.`, '');
    if (entry.changes.length > 0)
      for (const change of entry.changes) lines.push(`- ${change.sentence}`);
    else
      lines.push(
        `- The first version${entry.released ? `: the contract of \`${entry.released}\`, exactly as released` : ''}.`,
      );
  }
  return `${lines.join('\n')}\n`;
}
