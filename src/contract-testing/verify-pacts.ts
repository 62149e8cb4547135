/**
 * Provider verification of consumers' pacts against the sandbox with Pact's own verifier. Pact
 * verifies one interaction at a time: its state changes come first, then its request (or its
 * message), then the tear-down. The request filter sees all three, so it gives each interaction a
 * tenant of its own, sets its states up there, answers its messages, puts that tenant's key
 * on its request, and records the request and its answer for the report of a failure.
 */
import type { NextFunction, Request, Response } from 'express';
import { Verifier } from '@pact-foundation/pact';
import type { JsonObject } from '../versions/change';
import { eventDown } from '../versions/migrate';
import { recordExchange, type Exchange } from './exchanges';
import { defaultInteractionVersion } from './interaction-versions';
import { produceEvent } from './message-producers';
import { PactFileError, type PactFile } from './pact-files';
import { setUpState, type InteractionTenant } from './provider-states';
import { TenantApi, type Sandbox } from './tenant-api';

/** Where Pact's verifier sends state changes and message requests (`Verifier`'s own paths). */
const stateChangePath = '/_pactSetup';
const messagePath = '/_messages';
/** Sent as it is, so that a pact can expect its `401`. */
const invalidAuthorization = 'Bearer invalid';

export interface VerifyOptions {
  providerVersion?: string;
  /** The API version of interactions that send no `Api-Version`, and of messages: 2026-11-28 by default. */
  apiVersion?: string;
  /** Pact's own log level; its report is printed whatever this is. */
  logLevel?: 'trace' | 'debug' | 'info' | 'warn' | 'error';
}

export interface VerificationOutcome {
  passed: boolean;
  /** What the provider could not set up or produce, by interaction. */
  providerFailures: ProviderFailure[];
  /** Each HTTP request forwarded to the sandbox and its answer, by interaction. */
  exchanges: Exchange[];
  /** Pact's results: `errors` lists each failed interaction and its mismatches. */
  results: {
    result?: boolean;
    errors?: { interaction: string; mismatch: unknown }[];
    [key: string]: unknown;
  };
}

/** An interaction as the verifier meets it: its description and the names of its states. */
interface ExpectedInteraction {
  consumer: string;
  description: string;
  states: string[];
}

function expectedInteractions(pacts: PactFile[]): ExpectedInteraction[] {
  return pacts.flatMap((pact) =>
    pact.interactions.map((interaction) => ({
      consumer: pact.consumer,
      description: String(interaction.description ?? ''),
      states: interaction.providerStates
        ? interaction.providerStates.map((state: { name: string }) => state.name)
        : interaction.providerState
          ? [interaction.providerState]
          : [],
    })),
  );
}

/** Why the provider could not take part in an interaction, for the report after Pact's. */
export interface ProviderFailure {
  interaction: string;
  reason: string;
}

type CurrentInteraction = InteractionTenant & {
  consumer?: string;
  description: string;
  used: boolean;
  states: Set<string>;
};

/**
 * The interactions, one after the other, each with a tenant of its own. Pact's verifier sends
 * every interaction at least one state change (an empty name when it has no state) before its
 * request; a state change after a request, or naming a state set up already, starts the next.
 */
class InteractionTenants {
  private current?: CurrentInteraction;
  private count = 0;
  private position = -1;

  constructor(
    private readonly sandbox: Sandbox,
    private readonly expected: ExpectedInteraction[],
  ) {}

  async forStateChange(state: string): Promise<CurrentInteraction> {
    if (!this.current || this.current.used || this.current.states.has(state))
      await this.next(state);
    this.current!.states.add(state);
    return this.current!;
  }

  async forRequest(): Promise<CurrentInteraction> {
    if (!this.current || this.current.used) await this.next('');
    this.current!.used = true;
    return this.current!;
  }

  end() {
    if (this.current) this.current.used = true;
  }

  /** The next interaction the verifier is on: the next one, in the pacts' order, that starts with this state. */
  private async next(firstState: string) {
    const found = this.expected.findIndex(
      (interaction, index) => index > this.position && (interaction.states[0] ?? '') === firstState,
    );
    if (found >= 0) this.position = found;
    this.count += 1;
    this.current = {
      consumer: found >= 0 ? this.expected[found].consumer : undefined,
      description: found >= 0 ? this.expected[found].description : `interaction ${this.count}`,
      api: await TenantApi.create(this.sandbox, `pact-${this.count}`),
      readOnly: false,
      values: {},
      made: {},
      used: false,
      states: new Set(),
    };
  }
}

/** What the request carried as `Authorization`, in words: the key itself is never shown. */
function authorizationSent(sent: string | undefined, current: CurrentInteraction) {
  if (sent === undefined) return undefined;
  if (sent === invalidAuthorization) return `${invalidAuthorization} (the pact's, as it is)`;
  return `a ${current.readOnly ? 'read-only' : 'write'} key of the interaction's tenant (not shown)`;
}

/** Messages carry JSON: Pact's verifier reads their metadata from this header, base64 JSON. */
const messageMetadata = Buffer.from(JSON.stringify({ contentType: 'application/json' })).toString(
  'base64',
);

/**
 * Pact's verifier calls this before its own handlers. A failure is answered 400: the verifier
 * then fails the interaction at once (a 5xx it retries for minutes), and the reason is kept for
 * the report, since Pact's says only that a state change failed.
 */
export function requestFilterFor(
  sandbox: Sandbox,
  pacts: PactFile[],
  {
    providerFailures: failures,
    exchanges,
  }: Pick<VerificationOutcome, 'providerFailures' | 'exchanges'>,
  apiVersion: string = defaultInteractionVersion,
) {
  const tenants = new InteractionTenants(sandbox, expectedInteractions(pacts));
  let current: CurrentInteraction | undefined;
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      if (req.method === 'POST' && req.path === stateChangePath) {
        const { state, params, action } = req.body ?? {};
        if (action === 'teardown') {
          tenants.end();
          res.json({});
          return;
        }
        current = await tenants.forStateChange(state ?? '');
        res.json(state ? await setUpState(current, state, params ?? {}) : {});
        return;
      }
      current = await tenants.forRequest();
      if (req.method === 'POST' && req.path === messagePath) {
        const event = await produceEvent(current, req.body?.description ?? '');
        res.setHeader('Pact-Message-Metadata', messageMetadata);
        // As an endpoint or a reader of the feed in that version is given it.
        res
          .type('application/json')
          .send(JSON.stringify(eventDown(apiVersion, event as unknown as JsonObject)));
        return;
      }
      const sent = req.headers.authorization;
      if (sent !== undefined && sent !== invalidAuthorization)
        req.headers.authorization = `Bearer ${current.readOnly ? await current.api.readKey() : current.api.writeKey}`;
      // An interaction that names no version is asked in the verification's (the states were
      // set up in the newest, whatever it is).
      req.headers['api-version'] ??= apiVersion;
      exchanges.push(recordExchange(current, req, res, authorizationSent(sent, current)));
      next();
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      failures.push({ interaction: current?.description ?? 'an interaction', reason });
      // The verifier skips an interaction whose state failed: the next state change is the next one's.
      tenants.end();
      res.status(400).type('text/plain').send(reason);
    }
  };
}

export async function verifyPacts(
  sandbox: Sandbox,
  pacts: PactFile[],
  options: VerifyOptions = {},
): Promise<VerificationOutcome> {
  // Pact's core reports usage to the internet unless told not to; a verification stays on this machine.
  process.env.PACT_DO_NOT_TRACK = 'true';
  const recorded = { providerFailures: [] as ProviderFailure[], exchanges: [] as Exchange[] };
  const verifier = new Verifier({
    provider: pacts[0].provider,
    providerBaseUrl: sandbox.url,
    pactUrls: pacts.map((pact) => pact.path),
    ...(options.providerVersion ? { providerVersion: options.providerVersion } : {}),
    logLevel: options.logLevel ?? 'error',
    requestFilter: requestFilterFor(sandbox, pacts, recorded, options.apiVersion),
  });
  let results: string;
  try {
    results = await verifier.verifyProvider();
  } catch (error) {
    // A failed verification rejects with Pact's results; anything else did not run.
    const failed = resultsOf((error as Error).message);
    if (!failed) throw error;
    refuseUnloadedPacts(failed);
    return { passed: false, ...recorded, results: failed };
  }
  return { passed: true, ...recorded, results: resultsOf(results) ?? {} };
}

/**
 * Pact's verifier parses each pact again, more strictly than JSON.parse (it refuses JSON nested
 * more than 127 levels deep, for one): a pact it cannot load is an unreadable pact, exit 2, not
 * a failed interaction. Its message names the file.
 */
function refuseUnloadedPacts(results: VerificationOutcome['results']): void {
  const unloaded = (results.errors ?? []).filter(
    (error) => error.interaction === 'Failed to load pact',
  );
  if (unloaded.length > 0)
    throw new PactFileError(
      unloaded
        .map(({ mismatch }) => (mismatch as { message?: string })?.message ?? 'Failed to load pact')
        .join('; '),
    );
}

function resultsOf(text: unknown): VerificationOutcome['results'] | undefined {
  try {
    const results = typeof text === 'string' ? JSON.parse(text) : undefined;
    return results && typeof results === 'object' ? results : undefined;
  } catch {
    return undefined;
  }
}
