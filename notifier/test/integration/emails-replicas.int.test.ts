import { COLLECTIONS, type EmailMessageDoc } from '@vigil/proto';
import { adminPortOf, spawnService, testServers, uniqueName, waitFor } from '../../../deploy/test-support';
import type { ServiceProcess } from '../../../deploy/test-support';
import { createWorld, userStatusChanged, type World } from './harness';
import { smtpReceiver } from '../../../deploy/test-support/smtp-receiver';

// Replicas during a rollout that adds SMTP_URL: the one that consumed the status change has no relay, another has.
// The email must not depend on which of them held the event's partition.

let world: World;
let withSmtp: ServiceProcess | undefined;
const smtp = smtpReceiver();
const { received } = smtp;
let smtpPort = 0;

beforeAll(async () => {
  smtpPort = await smtp.listen();
  world = await createWorld();
  // In process, without SMTP_URL: it consumes the events.
  await world.start({ EMAIL_POLL_MS: '100' });
});

afterAll(async () => {
  await withSmtp?.stop();
  await world.close();
  await smtp.close();
});

const messages = (userId: string) =>
  world.db.collection<EmailMessageDoc>(COLLECTIONS.emailMessages).find({ userId }).toArray();

it('sends the email that a notifier without SMTP planned, from a notifier with SMTP', async () => {
  const tenant = world.tenant();
  await world.db
    .collection<{ _id: string }>(COLLECTIONS.settings)
    .insertOne({ _id: tenant.tenantId, emails: { enabled: true, templates: {} } } as { _id: string });
  await world.db
    .collection<{ _id: string }>(COLLECTIONS.tenants)
    .insertOne({ _id: tenant.tenantId, name: 'Acme' } as never);
  const user = await tenant.user('u-1', { email: 'rollout@example.com' });
  await world.publish(userStatusChanged(tenant, user));
  const [planned] = await waitFor(async () => {
    const docs = await messages(user._id);
    return docs.length > 0 ? docs : undefined;
  });
  expect(planned).toMatchObject({ state: 'pending', attemptCount: 0 });
  expect(planned).not.toHaveProperty('skipReason');

  // A notifier with a relay, in a group of its own so that it does not take the partitions over: it sends what is
  // pending in the store, whoever planned it.
  const servers = testServers();
  withSmtp = spawnService('notifier', {
    ...world.env,
    MONGO_URL: servers.mongoUrl,
    KAFKA_BROKERS: servers.kafkaBrokers.join(','),
    KAFKA_GROUP_ID: uniqueName('grp'),
    ADMIN_PORT: '0',
    SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
    EMAIL_POLL_MS: '100',
  });
  await adminPortOf(withSmtp);
  const [sent] = await waitFor(
    async () => {
      const docs = await messages(user._id);
      return docs[0]?.state === 'sent' ? docs : undefined;
    },
    { timeoutMs: 60000, what: 'the email sent' },
  );
  expect(sent).toMatchObject({ attemptCount: 1 });
  const to = received.flatMap((mail) => (Array.isArray(mail.to) ? mail.to : [mail.to])).map((address) => address?.text);
  expect(to).toEqual(['rollout@example.com']);
});
