/**
 * The pact files named on the command line: files as they are, folders for the `.json` files
 * directly in them. Each is read and checked to be a pact before anything starts, so an
 * unreadable one is a usage error (exit 2), not a failed verification.
 */
import fs from 'node:fs';
import path from 'node:path';

export class PactFileError extends Error {}

export interface PactFile {
  path: string;
  consumer: string;
  provider: string;
  /** HTTP and message interactions, as the file holds them (V2/V3 `interactions`, V3 `messages`, V4 both). */
  interactions: PactInteraction[];
  /** A Pact V3 message pact: no HTTP interaction, nothing for the document to say. */
  messagesOnly: boolean;
}

/** What this service reads of an interaction: Pact's verifier reads the rest. */
export interface PactInteraction {
  description?: string;
  /** Pact V2. */
  providerState?: string;
  /** Pact V3 and V4. */
  providerStates?: { name: string; params?: Record<string, unknown> }[];
}

function readPact(file: string): PactFile {
  let json: {
    consumer?: { name?: unknown };
    provider?: { name?: unknown };
    interactions?: PactInteraction[];
    messages?: PactInteraction[];
  };
  try {
    json = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    throw new PactFileError(`${file}: cannot be read as JSON (${(error as Error).message})`);
  }
  const interactions = [...(json?.interactions ?? []), ...(json?.messages ?? [])];
  if (typeof json?.consumer?.name !== 'string' || typeof json?.provider?.name !== 'string')
    throw new PactFileError(`${file}: is not a pact (it needs consumer.name and provider.name)`);
  if (
    !Array.isArray(json.interactions ?? []) ||
    !Array.isArray(json.messages ?? []) ||
    interactions.length === 0
  )
    throw new PactFileError(
      `${file}: is not a pact with interactions (it needs "interactions" or "messages")`,
    );
  return {
    path: file,
    consumer: json.consumer.name,
    provider: json.provider.name,
    interactions,
    messagesOnly: json.interactions === undefined,
  };
}

export function readPactFiles(names: string[]): PactFile[] {
  if (names.length === 0) throw new PactFileError('name at least one pact file or folder');
  const files = names.flatMap((name) => {
    const resolved = path.resolve(name);
    if (!fs.existsSync(resolved)) throw new PactFileError(`${name}: no such file or folder`);
    if (!fs.statSync(resolved).isDirectory()) return [resolved];
    const inside = fs
      .readdirSync(resolved)
      .filter((entry) => entry.endsWith('.json'))
      .sort()
      .map((entry) => path.join(resolved, entry));
    if (inside.length === 0)
      throw new PactFileError(`${name}: the folder holds no .json pact file`);
    return inside;
  });
  return files.map(readPact);
}
