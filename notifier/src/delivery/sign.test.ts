import { Webhook } from 'standardwebhooks';
import { signatureHeaders } from './sign';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const OLD_SECRET = 'whsec_dGhpcyBpcyB0aGUgb2xkIHNlY3JldCwgcm90YXRlZCE=';

describe('signatureHeaders', () => {
  it('matches the Standard Webhooks reference vector', () => {
    const headers = signatureHeaders({
      webhookId: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      timestamp: 1614265330,
      body: '{"test": 2432232314}',
      secrets: [SECRET],
    });
    expect(headers['webhook-signature']).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
    expect(headers['webhook-timestamp']).toBe('1614265330');
    expect(headers['webhook-id']).toBe('msg_p5jXN8AQM9LWM0D4loKWxJek');
  });

  it('signs X-Signature as Iffy does: hex HMAC of the body keyed with the secret string (fixed vector)', () => {
    const headers = signatureHeaders({
      webhookId: 'msg_1',
      timestamp: 1,
      body: '{"event":"record.flagged","timestamp":"1700000000000","id":"mod_1","payload":{}}',
      secrets: [SECRET],
    });
    expect(headers['x-signature']).toBe('7bcdbc7c83620f1dcf2f572494b185bf14d4eb108b0d3493c2a308810089eb74');
  });

  it('verifies with the standardwebhooks package under every active secret during a rotation', () => {
    const body = JSON.stringify({ event: 'user.banned', timestamp: String(Date.now()), id: 'act_1', payload: {} });
    const headers = signatureHeaders({
      webhookId: 'msg_abc',
      timestamp: Math.floor(Date.now() / 1000),
      body,
      secrets: [SECRET, OLD_SECRET],
    });
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    for (const secret of [SECRET, OLD_SECRET]) {
      expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
    }
    expect(() => new Webhook(SECRET).verify(`${body} `, { ...headers })).toThrow();
  });

  it('refuses to sign without a secret', () => {
    expect(() => signatureHeaders({ webhookId: 'm', timestamp: 1, body: '{}', secrets: [] })).toThrow();
  });
});
