import { COLLECTIONS, AppealTokens } from '@vigil/proto';
import { waitFor } from '../../../deploy/test-support';
import type { EmailMessageDoc } from '@vigil/proto';
import { createReceiver, createWorld, userStatusChanged, type Receiver, type World } from './harness';
import { smtpReceiver } from '../../../deploy/test-support/smtp-receiver';

const APPEAL_SECRET = 'a-test-appeal-secret-of-at-least-32-chars';

let world: World;
let hook: Receiver;
let failuresLeft = 0;
const smtp = smtpReceiver(() => {
  if (failuresLeft <= 0) return false;
  failuresLeft -= 1;
  return true;
});

beforeAll(async () => {
  const port = await smtp.listen();
  hook = await createReceiver();
  world = await createWorld();
  await world.start({
    SMTP_URL: `smtp://127.0.0.1:${port}`,
    EMAIL_FROM: 'Trust <no-reply@vigil.test>',
    EMAIL_TIMEOUT_MS: '5000',
    EMAIL_RETRY_SCHEDULE_S: '0.2,0.2,0.2',
    EMAIL_POLL_MS: '100',
    APPEAL_TOKEN_SECRET: APPEAL_SECRET,
    GATEWAY_PUBLIC_URL: 'https://moderation.example',
  });
});

afterAll(async () => {
  await world.close();
  await hook.close();
  await smtp.close();
});

const messages = (userId: string) =>
  world.db.collection<EmailMessageDoc>(COLLECTIONS.emailMessages).find({ userId }).toArray();

async function enableEmails(tenantId: string, templates: Record<string, unknown> = {}) {
  await world.db
    .collection<{ _id: string }>(COLLECTIONS.settings)
    .insertOne({ _id: tenantId, emails: { enabled: true, templates } } as { _id: string });
  await world.db.collection<{ _id: string }>(COLLECTIONS.tenants).insertOne({ _id: tenantId, name: 'Acme' } as never);
}

/** The consumer plans emails before it stores the event's deliveries: once a delivery exists, the plan is written. */
const consumed = (eventId: string) =>
  waitFor(async () => ((await world.deliveries({ eventId })).length > 0 ? true : undefined), { what: 'consumed' });

const mailTo = (address: string) =>
  smtp.received.filter((mail) => (Array.isArray(mail.to) ? mail.to : [mail.to]).some((to) => to?.text === address));

describe('user emails', () => {
  it('sends the Suspended email with rendered placeholders and a verifiable appeal link', async () => {
    const tenant = world.tenant();
    await enableEmails(tenant.tenantId, {
      Suspended: {
        subject: 'Hi {{username}}',
        heading: 'Suspended on {{platformName}}',
        body: 'Dear {{name}},\n\nSorry.',
      },
    });
    const user = await tenant.user('u-1', { email: 'ann@example.com', username: 'ann<1>', name: 'Ann' });
    await world.publish(userStatusChanged(tenant, user));

    const [mail] = await waitFor(() => (mailTo('ann@example.com').length ? mailTo('ann@example.com') : undefined), {
      what: 'email',
    });
    expect(mail!.subject).toBe('Hi ann<1>');
    expect(mail!.from?.text).toContain('no-reply@vigil.test');
    expect(mail!.text).toContain('Dear Ann,');
    expect(mail!.html).toContain('Suspended on Acme');
    const token = /https:\/\/moderation\.example\/appeal\?token=([\w.-]+)/.exec(mail!.text ?? '')?.[1];
    expect(new AppealTokens(APPEAL_SECRET, 60).verify(token ?? '')).toMatchObject({
      tenantId: tenant.tenantId,
      userId: user._id,
    });
    const [doc] = await waitFor(async () => {
      const docs = await messages(user._id);
      return docs[0]?.state === 'sent' ? docs : undefined;
    });
    expect(doc).toMatchObject({ kind: 'Suspended', state: 'sent', attemptCount: 1 });
    expect(JSON.stringify(doc)).not.toContain('ann@example.com');
  });

  it('retries a temporary SMTP rejection, then sends', async () => {
    const tenant = world.tenant();
    await enableEmails(tenant.tenantId);
    const user = await tenant.user('u-2', { email: 'bob@example.com' });
    failuresLeft = 2;
    await world.publish(userStatusChanged(tenant, user, { status: 'Banned', previousStatus: 'Suspended' }));

    const [doc] = await waitFor(async () => {
      const docs = await messages(user._id);
      return docs[0]?.state === 'sent' ? docs : undefined;
    });
    expect(doc!.attemptCount).toBe(3);
    expect(doc!.attempts.map((a) => a.responseCode ?? null)).toEqual([451, 451, null]);
    expect(mailTo('bob@example.com')).toHaveLength(1);
    // A banned user may appeal as a suspended one may: the Banned email carries the link.
    const token = /\/appeal\?token=([\w.-]+)/.exec(mailTo('bob@example.com')[0]!.text ?? '')?.[1];
    expect(new AppealTokens(APPEAL_SECRET, 60).verify(token ?? '')).toMatchObject({ userId: user._id });
    expect(mailTo('bob@example.com')[0]!.subject).toBe('Your Acme account has been banned');
  });

  it('sends once when the event is consumed again', async () => {
    const tenant = world.tenant();
    await enableEmails(tenant.tenantId);
    const user = await tenant.user('u-3', { email: 'cy@example.com' });
    const event = userStatusChanged(tenant, user, { status: 'Compliant', previousStatus: 'Suspended' });
    await world.publish(event);
    await waitFor(() => (mailTo('cy@example.com').length ? true : undefined), { what: 'email' });
    await world.publish(event, event);
    // Same stream, same partition: once this later event is consumed, the re-published ones were too.
    await tenant.endpoint(hook.url, { events: ['user.suspended'] });
    const later = {
      ...userStatusChanged(tenant, user, { status: 'Suspended', previousStatus: 'Compliant' }),
      version: 3,
    };
    await world.publish(later);
    await consumed(later.id);
    await waitFor(() => (mailTo('cy@example.com').length >= 2 ? true : undefined), { what: 'second email' });
    expect(mailTo('cy@example.com').map((mail) => mail.subject)).toEqual([
      'Your Acme account has been reinstated',
      'Your Acme account has been suspended',
    ]);
    expect(await messages(user._id)).toHaveLength(2);
  });

  it('records a user without an address as skipped, and sends nothing while emails are off', async () => {
    const tenant = world.tenant();
    await enableEmails(tenant.tenantId);
    const noAddress = await tenant.user('u-4');
    await world.publish(userStatusChanged(tenant, noAddress));
    const [doc] = await waitFor(async () => {
      const docs = await messages(noAddress._id);
      return docs[0]?.state === 'skipped' ? docs : undefined;
    });
    expect(doc).toMatchObject({ skipReason: 'no_email', attemptCount: 0 });

    const off = world.tenant();
    await off.endpoint(hook.url);
    const quiet = await off.user('u-5', { email: 'quiet@example.com' });
    const event = userStatusChanged(off, quiet);
    await world.publish(event);
    await consumed(event.id);
    expect(await messages(quiet._id)).toHaveLength(0);
    expect(mailTo('quiet@example.com')).toHaveLength(0);
  });
});
