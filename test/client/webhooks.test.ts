/**
 * The client kit's webhook verification against real deliveries from the service: verified with
 * the endpoint's secret, across a rotation with both secrets, from Node's headers, Fetch Headers
 * and a plain object; tampered bodies, stale timestamps and wrong secrets refused, each saying why.
 */
import { createClient, type TaskTrackerClient } from '../../clients/typescript/src';
import {
  signTestWebhook,
  verifyWebhook,
  WebhookVerificationError,
} from '../../clients/typescript/src/webhooks';
import { startTestService, type TestService } from '../support/test-service';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';

let api: TestService;
let client: TaskTrackerClient;
let receiver: WebhookReceiver;
let secret: string;
let endpointId: string;

beforeAll(async () => {
  api = await startTestService({ config: { webhookAllowPrivateTargets: true } });
  receiver = await startReceiver();
  client = createClient({ baseUrl: api.baseUrl, apiKey: await api.createKey('hooks') });
  const endpoint = await client.webhookEndpoints.create({ url: `${receiver.origin}/hook` });
  secret = endpoint.secret;
  endpointId = endpoint.webhook_endpoint_id;
});
afterAll(async () => {
  await api.stop();
  await receiver.stop();
});

const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return error instanceof WebhookVerificationError
      ? error.reason
      : `not a WebhookVerificationError: ${String(error)}`;
  }
  return 'verified';
};

it('verifies a real delivery from Node headers, Fetch Headers and a plain object, typed by its type', async () => {
  const project = await client.projects.create({ name: 'hooked' });
  const [delivery] = await receiver.waitFor(1);
  const event = verifyWebhook(delivery.body, delivery.headers, secret);
  expect(event.type).toBe('project.created');
  if (event.type === 'project.created')
    expect(event.data.object.project_id).toBe(project.project_id);
  const fetchHeaders = new Headers(
    Object.entries(delivery.headers).map(([name, value]) => [name, String(value)]),
  );
  expect(
    verifyWebhook(new TextEncoder().encode(delivery.body), fetchHeaders, secret).event_id,
  ).toBe(event.event_id);
  const plain = Object.fromEntries(
    Object.entries(delivery.headers).map(([name, value]) => [name.toUpperCase(), String(value)]),
  );
  expect(verifyWebhook(delivery.body, plain, [secret]).event_id).toBe(event.event_id);
});

it('refuses a tampered body, a wrong secret, a stale timestamp and missing headers, saying which', async () => {
  const [delivery] = receiver.received;
  const other = (await client.webhookEndpoints.create({ url: `${receiver.origin}/other` })).secret;
  expect(
    refusal(() =>
      verifyWebhook(delivery.body.replace('hooked', 'hacked'), delivery.headers, secret),
    ),
  ).toBe('signature');
  expect(refusal(() => verifyWebhook(delivery.body, delivery.headers, other))).toBe('signature');
  const { 'webhook-signature': _, ...unsigned } = delivery.headers;
  expect(refusal(() => verifyWebhook(delivery.body, unsigned, secret))).toBe('format');
  const stale = signTestWebhook(JSON.parse(delivery.body), secret, {
    timestamp: new Date(Date.now() - 10 * 60_000),
  });
  expect(refusal(() => verifyWebhook(stale.body, stale.headers, secret))).toBe('timestamp');
  const fresh = signTestWebhook(JSON.parse(delivery.body), secret);
  expect(refusal(() => verifyWebhook(fresh.body, fresh.headers, secret))).toBe('verified');
});

it('verifies deliveries signed during a rotation with the old secret or the new one', async () => {
  const { secret: rotated } = await client.webhookEndpoints.rotateSecret(endpointId);
  const before = receiver.received.length;
  await client.projects.create({ name: 'after rotation' });
  const [delivery] = (await receiver.waitFor(before + 1, { path: '/hook' })).slice(-1);
  // Two signatures during the rotation's 24 hours: either secret alone verifies the delivery.
  expect(String(delivery.headers['webhook-signature']).split(' ')).toHaveLength(2);
  expect(verifyWebhook(delivery.body, delivery.headers, secret).type).toBe('project.created');
  expect(verifyWebhook(delivery.body, delivery.headers, rotated).type).toBe('project.created');
  expect(
    verifyWebhook(delivery.body, delivery.headers, [
      'whsec_' + Buffer.alloc(32).toString('base64'),
      rotated,
    ]).type,
  ).toBe('project.created');
});
