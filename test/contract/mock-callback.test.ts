/**
 * `make mock` users get a sample delivery: Prism's mock, asked to register a webhook endpoint,
 * sends the document's `event` callback to the URL registered, with the example Event. Prism
 * 5.14 leaves a callback's header parameters out (stoplightio/prism#2162, open): the three
 * Standard Webhooks headers are checked when they come, and then must carry the example
 * signature, made with the example secret.
 */
import fs from 'node:fs';
import { Webhook } from 'standardwebhooks';
import YAML from 'yaml';
import { loadDocument } from '../../src/http/document';
import { documentFileOf } from '../../src/versions/documents';
import { supportedVersions } from '../../src/versions/versions';
import { startPrism, type RunningPrism } from '../support/prism';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';

let mock: RunningPrism;
let receiver: WebhookReceiver;

beforeAll(async () => {
  [mock, receiver] = await Promise.all([startPrism({ mock: 'static' }), startReceiver()]);
});
afterAll(async () => {
  await Promise.all([mock.stop(), receiver.stop()]);
});

it('sends the example delivery to the URL a client registers', async () => {
  const response = await fetch(`${mock.url}/v1/webhook-endpoints`, {
    method: 'POST',
    headers: { Authorization: 'Bearer anything', 'Content-Type': 'application/json' },
    body: JSON.stringify({ url: `${receiver.origin}/from-the-mock` }),
  });
  expect(response.status).toBe(201);
  const registered = (await response.json()) as { secret: string };
  const [delivery] = await receiver.waitFor(1, { path: '/from-the-mock', timeoutMs: 10_000 });

  const examples = (loadDocument().definition as any).components.examples;
  expect(delivery.method).toBe('POST');
  expect(delivery.headers['content-type']).toMatch(/^application\/json/);
  expect(JSON.parse(delivery.body)).toEqual(examples.DeliveredEvent.value);
  if (delivery.headers['webhook-id'] === undefined) return;
  expect(delivery.headers['webhook-id']).toBe(examples.DeliveredEvent.value.event_id);
  expect(delivery.headers['webhook-timestamp']).toMatch(/^\d+$/);
  // The example signature is the example secret's, over the example's id, timestamp and body
  // (verify() would refuse its timestamp as too old, so the signature is made again here).
  const timestamp = new Date(Number(delivery.headers['webhook-timestamp']) * 1000);
  expect(delivery.headers['webhook-signature']).toBe(
    new Webhook(registered.secret).sign(
      delivery.headers['webhook-id'] as string,
      timestamp,
      delivery.body,
    ),
  );
});

it.each(supportedVersions)(
  'documents a signature that the example secret makes over the example event, in %s',
  (version) => {
    const document = YAML.parse(fs.readFileSync(documentFileOf(version), 'utf8'));
    const { examples } = document.components;
    const callback =
      document.paths['/v1/webhook-endpoints'].post.callbacks.event['{$request.body#/url}'].post;
    const example = (name: string) =>
      callback.parameters.find((p: { name: string }) => p.name === name).example;
    const body = JSON.stringify(examples.DeliveredEvent.value);
    const timestamp = new Date(Number(example('webhook-timestamp')) * 1000);
    expect(example('webhook-id')).toBe(examples.DeliveredEvent.value.event_id);
    expect(example('webhook-signature')).toBe(
      new Webhook(examples.NewWebhookEndpoint.value.secret).sign(
        example('webhook-id'),
        timestamp,
        body,
      ),
    );
  },
);
