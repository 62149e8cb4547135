/**
 * The pact files named on the command line: files as they are, folders for the `.json` files
 * directly in them. Each is read and checked to be a pact before anything starts, so an
 * unreadable one is a usage error (exit 2), not a failed verification. A file over the limits is
 * refused too: the size before it is read, so a huge pact cannot run for hours or fill memory.
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

/** Whether the verifier's bookkeeping can read the interaction (what PactInteraction types). */
function readableInteraction(interaction: unknown): boolean {
  if (!interaction || typeof interaction !== 'object' || Array.isArray(interaction)) return false;
  const { description, providerState, providerStates } = interaction as Record<string, unknown>;
  return (
    ['string', 'undefined'].includes(typeof description) &&
    ['string', 'undefined'].includes(typeof providerState) &&
    (providerStates === undefined ||
      (Array.isArray(providerStates) &&
        providerStates.every((state) => typeof state?.name === 'string')))
  );
}

/** How big one pact file may be; `--max-bytes` and `--max-interactions` change them. */
export interface PactLimits {
  maxBytes: number;
  /** HTTP and message interactions together. */
  maxInteractions: number;
}

export const defaultPactLimits: PactLimits = { maxBytes: 10 * 1024 * 1024, maxInteractions: 5000 };

/** `10485760` as `10 MB (10485760 bytes)`, so the message says both the size and the flag's value. */
function sizeOf(bytes: number): string {
  const megabytes = bytes / (1024 * 1024);
  return Number.isInteger(megabytes) ? `${megabytes} MB (${bytes} bytes)` : `${bytes} bytes`;
}

/** The file's text, its size checked before it is read. */
function readText(file: string, limits: PactLimits): string {
  try {
    const { size } = fs.statSync(file);
    if (size > limits.maxBytes)
      throw new PactFileError(
        `${file}: is ${size} bytes, more than the limit of ${sizeOf(limits.maxBytes)} per pact file; raise it with --max-bytes ${size}`,
      );
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    if (error instanceof PactFileError) throw error;
    throw new PactFileError(`${file}: cannot be read (${(error as Error).message})`);
  }
}

function readPact(file: string, limits: PactLimits): PactFile {
  const text = readText(file, limits);
  let json: {
    consumer?: { name?: unknown };
    provider?: { name?: unknown };
    interactions?: PactInteraction[];
    messages?: PactInteraction[];
  };
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new PactFileError(`${file}: cannot be read as JSON (${(error as Error).message})`);
  }
  if (typeof json?.consumer?.name !== 'string' || typeof json?.provider?.name !== 'string')
    throw new PactFileError(`${file}: is not a pact (it needs consumer.name and provider.name)`);
  const { interactions: http = [], messages = [] } = json;
  if (!Array.isArray(http) || !Array.isArray(messages) || http.length + messages.length === 0)
    throw new PactFileError(
      `${file}: is not a pact with interactions (it needs an "interactions" or "messages" array)`,
    );
  const interactions = [...http, ...messages];
  const wrong = interactions.findIndex((interaction) => !readableInteraction(interaction));
  if (wrong >= 0)
    throw new PactFileError(
      `${file}: is not a pact (its interaction ${wrong + 1} is not an object, or its description, providerState or providerStates are not as Pact writes them)`,
    );
  if (interactions.length > limits.maxInteractions)
    throw new PactFileError(
      `${file}: has ${interactions.length} interactions, more than the limit of ${limits.maxInteractions} per pact file; raise it with --max-interactions ${interactions.length}`,
    );
  return {
    path: file,
    consumer: json.consumer.name,
    provider: json.provider.name,
    interactions,
    messagesOnly: json.interactions === undefined,
  };
}

export function readPactFiles(names: string[], limits = defaultPactLimits): PactFile[] {
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
  return files.map((file) => readPact(file, limits));
}
