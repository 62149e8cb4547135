/** The signer against the Standard Webhooks library: every signature it makes, the library verifies. */
import { Webhook } from 'standardwebhooks';
import { newSecret, signatureHeader } from '../../src/webhooks/signer';

it('signs as the standardwebhooks library does, once per secret, for any body', () => {
  const secrets = [newSecret(), newSecret(), newSecret()];
  const timestamp = new Date('2026-11-28T09:30:00.250Z');
  for (const body of [
    '{}',
    JSON.stringify({ text: 'é ✓ \u0000' }),
    JSON.stringify({ text: 'x'.repeat(70_000) }),
  ]) {
    const header = signatureHeader('evt_1', timestamp, body, secrets);
    expect(header.split(' ')).toEqual(
      secrets.map((secret) => new Webhook(secret).sign('evt_1', timestamp, body)),
    );
    const now = new Date();
    for (const secret of secrets)
      expect(() =>
        new Webhook(secret).verify(body, {
          'webhook-id': 'evt_1',
          'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
          'webhook-signature': signatureHeader('evt_1', now, body, [secret]),
        }),
      ).not.toThrow();
  }
});

it('signs with no secret the header of none, and tells secrets apart', () => {
  const timestamp = new Date();
  expect(signatureHeader('evt_1', timestamp, '{}', [])).toBe('');
  const [a, b] = [newSecret(), newSecret()];
  expect(signatureHeader('evt_1', timestamp, '{}', [a])).not.toBe(
    signatureHeader('evt_1', timestamp, '{}', [b]),
  );
});
