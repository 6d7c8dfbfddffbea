import { recordIdFor, TenantVersions, userIdFor, type Topics } from '@vigil/proto';
import type { OutgoingCommand } from '../kafka/command-producer';
import { IngestBody } from '../routes/shared/record.schema';
import type { UseCaseDeps } from './deps';
import { ingestRecord } from './ingest-record';

/** The use case over in-memory fakes: a tenant's roll-out percentage, a producer that keeps what it is sent. */
function fakes(rolloutPercentage: number, configVersion = 0) {
  const sent: OutgoingCommand[] = [];
  const versions = new TenantVersions();
  if (configVersion > 0) versions.observe('t1', configVersion);
  const deps = {
    topics: { ingest: 'vigil.ingest.v1' } as Topics,
    versions,
    commands: {
      send: (command: OutgoingCommand) => {
        sent.push(command);
        return Promise.resolve();
      },
    },
    configStore: { cachedSettings: () => Promise.resolve({ rolloutPercentage }) },
  } as unknown as UseCaseDeps;
  return { deps, sent };
}

const caller = { tenantId: 't1', requestId: 'req_1' };
const input = IngestBody.parse({ clientId: 'c1', name: 'n', entity: 'Post', content: { text: 'hello' } });

describe('ingestRecord', () => {
  it.each([
    { rollout: 100, moderated: true },
    { rollout: 0, moderated: false },
  ])('sends one IngestRecord keyed by tenant and clientId (roll-out $rollout %)', async ({ rollout, moderated }) => {
    const { deps, sent } = fakes(rollout);
    const accepted = await ingestRecord(deps, caller, input);
    expect(accepted.recordId).toBe(recordIdFor('t1', 'c1'));
    expect(accepted.moderationId === null).toBe(!moderated);
    expect(accepted.userId).toBeUndefined();
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ topic: 'vigil.ingest.v1', key: 't1:c1', type: 'IngestRecord' });
    expect(sent[0]!.value).toMatchObject({
      type: 'IngestRecord',
      tenantId: 't1',
      correlationId: 'req_1',
      moderationId: accepted.moderationId,
      data: input,
    });
  });

  it('names the user and stamps the configuration version known here', async () => {
    const { deps, sent } = fakes(100, 7);
    const accepted = await ingestRecord(
      deps,
      caller,
      IngestBody.parse({
        clientId: 'c1',
        name: 'n',
        entity: 'Post',
        content: { text: 'hi' },
        user: { clientId: 'u1' },
      }),
    );
    expect(accepted.userId).toBe(userIdFor('t1', 'u1'));
    expect(sent[0]!.value).toMatchObject({ configVersion: 7 });
    expect(sent[0]!.value).not.toHaveProperty('configConfirmed');
  });

  it('says the version is confirmed only while its last confirmation is recent', async () => {
    const { deps, sent } = fakes(100);
    const versions = new TenantVersions({ confirmedForMs: 60_000 });
    deps.versions = versions;
    versions.confirm('t1', 0);
    await ingestRecord(deps, caller, input);
    expect(sent[0]!.value).toMatchObject({ configVersion: 0, configConfirmed: true });
    versions.confirm('t1', 3, Date.now() - 120_000);
    await ingestRecord(deps, caller, input);
    expect(sent[1]!.value).toMatchObject({ configVersion: 3 });
    expect(sent[1]!.value).not.toHaveProperty('configConfirmed');
  });

  it('fails, naming nothing accepted, when Kafka does not take the command', async () => {
    const { deps } = fakes(100);
    deps.commands.send = () => Promise.reject(new Error('no broker'));
    await expect(ingestRecord(deps, caller, input)).rejects.toThrow('no broker');
  });
});
