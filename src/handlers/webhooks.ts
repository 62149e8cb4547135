import type { WebhookRepositories } from '../webhooks/repositories';
import { checkTaskFilter } from '../db/task-filter';
import { InvalidFieldError, NotFoundError } from '../errors';
import { newSecret } from '../webhooks/signer';
import type { TargetGuard } from '../webhooks/target-guard';
import type { Defaulted, OperationChecks, OperationHandler, OperationInput } from './operation';
import { found, replyWith } from './operation';
import { versionedChanges } from './versioned-changes';

type EndpointListQuery = Defaulted<OperationInput<'listWebhookEndpoints'>['query'], 'limit'>;
type DeliveryListQuery = Defaulted<OperationInput<'listWebhookDeliveries'>['query'], 'limit'>;

export function webhookHandlers(
  { webhookEndpoints, webhookDeliveries }: WebhookRepositories,
  { endpointsPerTenant }: WebhookFences,
) {
  const createWebhookEndpoint: OperationHandler<'createWebhookEndpoint'> = async ({
    principal,
    body,
    apiVersion,
    write,
  }) => {
    const endpoint = await webhookEndpoints.create(
      principal.tenantId,
      {
        url: body.url,
        eventTypes: body.event_types ?? null,
        // Sound: webhookChecks checked what the document cannot say of it.
        filter: body.filter ?? null,
        fields: body.fields ?? null,
        description: body.description ?? '',
        secret: newSecret(),
        apiVersion,
      },
      endpointsPerTenant,
      write,
    );
    return {
      ...replyWith(201, endpoint),
      location: `/v1/webhook-endpoints/${endpoint.value.webhook_endpoint_id}`,
    };
  };

  const listWebhookEndpoints: OperationHandler<'listWebhookEndpoints'> = async ({
    principal,
    query,
  }) => ({
    status: 200,
    body: await webhookEndpoints.list(principal.tenantId, query as EndpointListQuery),
  });

  const getWebhookEndpoint: OperationHandler<'getWebhookEndpoint'> = async ({ principal, path }) =>
    replyWith(
      200,
      found(
        await webhookEndpoints.find(principal.tenantId, path.webhook_endpoint_id),
        'webhook endpoint',
        path.webhook_endpoint_id,
      ),
    );

  const { update: updateWebhookEndpoint, remove: deleteWebhookEndpoint } = versionedChanges(
    webhookEndpoints,
    'webhook endpoint',
    'webhook_endpoint_id',
  );

  const rotateWebhookEndpointSecret: OperationHandler<'rotateWebhookEndpointSecret'> = async ({
    principal,
    path,
    write,
  }) => {
    const secret = newSecret();
    if (
      !(await webhookEndpoints.rotateSecret(
        principal.tenantId,
        path.webhook_endpoint_id,
        secret,
        write,
      ))
    )
      throw new NotFoundError('webhook endpoint', path.webhook_endpoint_id);
    return { status: 200, body: { secret } };
  };

  const listWebhookDeliveries: OperationHandler<'listWebhookDeliveries'> = async ({
    principal,
    path,
    query,
  }) => ({
    status: 200,
    body: found(
      await webhookDeliveries.list(
        principal.tenantId,
        path.webhook_endpoint_id,
        query as DeliveryListQuery,
      ),
      'webhook endpoint',
      path.webhook_endpoint_id,
    ),
  });

  const createWebhookDelivery: OperationHandler<'createWebhookDelivery'> = async ({
    principal,
    path,
    body,
    write,
  }) => ({
    status: 202,
    body: found(
      await webhookDeliveries.redeliver(
        principal.tenantId,
        path.webhook_endpoint_id,
        body.event_id,
        write,
      ),
      'webhook endpoint',
      path.webhook_endpoint_id,
    ),
  });

  return {
    createWebhookEndpoint,
    listWebhookEndpoints,
    getWebhookEndpoint,
    updateWebhookEndpoint,
    deleteWebhookEndpoint,
    rotateWebhookEndpointSecret,
    listWebhookDeliveries,
    createWebhookDelivery,
  };
}

/** The fences of a tenant's webhooks: its most endpoints, and counts of its redeliveries and endpoint changes that refuse past their budgets. */
export interface WebhookFences {
  endpointsPerTenant: number;
  countRedelivery: (tenantId: string, endpointId: string) => Promise<void>;
  countEndpointChange: (tenantId: string) => Promise<void>;
}

/** Counted, then the target of a webhook checked (DNS included), before the change's transaction opens. */

export function webhookChecks(guard: TargetGuard, fences: WebhookFences): OperationChecks {
  const allowedTarget = async (url: string | undefined, tenantId: string) => {
    const refusal = url === undefined ? undefined : await guard.refusalOf(url, tenantId);
    if (refusal !== undefined) throw new InvalidFieldError('/url', refusal);
  };
  /** What the document cannot say of a filter (its depth, its count of conditions, its words). */
  const soundFilter = (filter: unknown) => {
    if (filter != null) checkTaskFilter(filter, '/filter');
  };
  return {
    createWebhookEndpoint: async ({ principal, body }) => {
      await fences.countEndpointChange(principal.tenantId);
      soundFilter(body.filter);
      await allowedTarget(body.url, principal.tenantId);
    },
    updateWebhookEndpoint: async ({ principal, body }) => {
      await fences.countEndpointChange(principal.tenantId);
      soundFilter(body.filter);
      await allowedTarget(body.url, principal.tenantId);
    },
    deleteWebhookEndpoint: ({ principal }) => fences.countEndpointChange(principal.tenantId),
    createWebhookDelivery: ({ principal, path }) =>
      fences.countRedelivery(principal.tenantId, path.webhook_endpoint_id),
  };
}
