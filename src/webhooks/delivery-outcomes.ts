/**
 * The outcomes of webhook delivery attempts, written under their claims (see
 * delivery-queue-repository.ts): a failure with its retry, planned in the same transaction, and
 * what the outcome does to its endpoint, which the caller decides (src/webhooks/endpoint-health.ts)
 * and this file only writes; successes many at a time, in one statement.
 */
import type { Knex } from 'knex';
import { affectedRows } from '../db/raw-answers';
import { nowForDb, toDbTimestamp, type DbTimestamp } from '../db/timestamps';
import { inTransaction, type Transaction } from '../db/transactions';
import type {
  ClaimedDelivery,
  DeliveryOutcome,
  DeliverySuccess,
  DisabledReason,
  EndpointHealthChange,
} from './queue-items';
import { plannedAttempt } from './webhook-deliveries-repository';

const readCommitted = { readCommitted: true };

/** Not wrapped in translatingErrors: the queue's repository, which holds these, is. */
export function deliveryOutcomes(knex: Knex) {
  /** Writes the outcome's meaning for its endpoint, in the outcome's transaction; the reason, when this disabled it. */
  const changeEndpoint = async (
    trx: Transaction,
    endpointId: string,
    change: EndpointHealthChange,
    now: DbTimestamp,
  ): Promise<DisabledReason | undefined> => {
    const endpoint = () => trx('webhook_endpoints').where('webhook_endpoint_id', endpointId);
    if (change.recovers)
      await endpoint().whereNotNull('failing_since').update({ failing_since: null });
    if (change.startsFailing)
      await endpoint().whereNull('failing_since').update({ failing_since: now });
    const { disable } = change;
    if (disable === undefined) return undefined;
    const disabling = endpoint().where('enabled', true);
    if (disable.reason === 'failing')
      disabling.where('failing_since', '<=', toDbTimestamp(disable.failingBefore.toISOString()));
    const disabled = await disabling.update({
      enabled: false,
      disabled_reason: disable.reason,
      updated_at: now,
      // A change the tenant sees: its ETag changes.
      version: knex.raw('?? + 1', ['version']),
    });
    return disabled > 0 ? disable.reason : undefined;
  };
  return {
    /**
     * Writes an attempt's outcome, if the attempt is still under this claim, with its retry and
     * what it means for the endpoint, all in one transaction. False when the claim was lost (its
     * lease ran out and another took the attempt over, or the endpoint was deleted).
     */
    async recordOutcome(
      delivery: ClaimedDelivery,
      outcome: DeliveryOutcome,
    ): Promise<{ kept: boolean; disabled?: DisabledReason }> {
      return inTransaction(
        knex,
        'webhook-outcome',
        async ({ trx }) => {
          const now = nowForDb();
          const retryAt = outcome.retryAt && toDbTimestamp(outcome.retryAt.toISOString());
          const written = await trx('webhook_deliveries')
            .where({
              delivery_id: delivery.deliveryId,
              claimed_by: delivery.claim,
              status: 'pending',
            })
            .update({
              status: outcome.succeeded ? 'succeeded' : 'failed',
              response_status: outcome.responseStatus,
              error: outcome.error,
              duration_ms: outcome.durationMs,
              next_attempt_at: retryAt ?? null,
              claimed_by: null,
              lease_until: null,
            });
          if (written === 0) return { kept: false };
          if (retryAt)
            await trx('webhook_deliveries').insert(
              plannedAttempt(
                delivery.endpointId,
                { event_id: delivery.eventId, type: delivery.eventType },
                delivery.attempt + 1,
                now,
                retryAt,
              ),
            );
          const disabled = await changeEndpoint(trx, delivery.endpointId, outcome.endpoint, now);
          return disabled ? { kept: true, disabled } : { kept: true };
        },
        readCommitted,
      );
    },

    /**
     * Writes the outcomes of attempts that succeeded, in one statement (one commit for many),
     * for those still under their claims; ends the run of failures of the endpoints that recover.
     * Answers how many were still under their claims.
     */
    async recordSuccesses(successes: DeliverySuccess[]): Promise<number> {
      if (successes.length === 0) return 0;
      const update = successesUpdate(successes);
      const recovered = [
        ...new Set(
          successes
            .filter((success) => success.recovers)
            .map((success) => success.delivery.endpointId),
        ),
      ];
      // In a transaction of its own, so that a deadlock with another writer (or a certification
      // conflict on a cluster) runs it again rather than leaving the attempts to be made twice.
      // Its writes wait for no answer: they go with BEGIN and COMMIT, in one round trip.
      let updated = 0;
      await inTransaction(
        knex,
        'webhook-successes',
        async ({ trx }) => {
          updated = 0;
          await trx.later({
            ...update,
            answerMeans: (answer) => void (updated = affectedRows(answer)),
          });
          if (recovered.length > 0)
            await trx.later(
              knex('webhook_endpoints')
                .whereIn('webhook_endpoint_id', recovered)
                .whereNotNull('failing_since')
                .update({ failing_since: null })
                .toSQL(),
            );
        },
        readCommitted,
      );
      return updated;
    },
  };
}

const placeholders = (count: number) => Array.from({ length: count }, () => '?').join(', ');

/**
 * The successes' one UPDATE, written as text: with two values an attempt, knex's builder spent
 * more on compiling it than mysql2 on sending it. The same SQL for MySQL and SQLite.
 */
function successesUpdate(successes: DeliverySuccess[]): { sql: string; bindings: Knex.Value[] } {
  const ids = successes.map((success) => success.delivery.deliveryId);
  const claims = [...new Set(successes.map((success) => success.delivery.claim))];
  const cases = `case delivery_id ${successes.map(() => 'when ? then ?').join(' ')} end`;
  return {
    sql:
      `update webhook_deliveries set status = 'succeeded', response_status = ${cases}, ` +
      `error = null, duration_ms = ${cases}, next_attempt_at = null, claimed_by = null, ` +
      `lease_until = null where delivery_id in (${placeholders(ids.length)}) ` +
      `and claimed_by in (${placeholders(claims.length)}) and status = 'pending'`,
    bindings: [
      ...successes.flatMap((success) => [success.delivery.deliveryId, success.responseStatus]),
      ...successes.flatMap((success) => [success.delivery.deliveryId, success.durationMs]),
      ...ids,
      ...claims,
    ],
  };
}
