import { HEADERS, TenantVersions, type Command } from '@vigil/proto';
import type { IHeaders } from 'kafkajs';
import pino from 'pino';
import { ConflictError, NotFoundError, UnknownTenantError, ValidationError } from '../domain/errors';
import type { ModerateInput, ModerateResult } from '../service/moderate';
import type { ReplayCheck } from '../service/replay-check';
import { IngestCommandHandler } from './ingest-command-handler';
import { ingestCommand } from './testing/commands';

const log = pino({ level: 'silent' });

/** A handler whose use cases and known tenants are in memory; `moderate` fails with `failures` first. */
function setup(options: { failures?: Error[]; replay?: ReplayCheck; deleteFails?: Error } = {}) {
  const moderated: ModerateInput[] = [];
  const deleted: string[] = [];
  const replayChecks: Command[] = [];
  const failures = [...(options.failures ?? [])];
  const known = new Set(['ten_1']);
  const versions = new TenantVersions();
  const handler = new IngestCommandHandler({
    service: {
      moderate: (input: ModerateInput) => {
        const failure = failures.shift();
        if (failure) return Promise.reject(failure);
        moderated.push(input);
        return Promise.resolve({ recordId: 'rec_1', status: 'Compliant', duplicate: false } as ModerateResult);
      },
      rerunModeration: () => Promise.resolve(true),
      deleteRecord: (input: { clientId: string }) => {
        if (options.deleteFails) return Promise.reject(options.deleteFails);
        deleted.push(input.clientId);
        return Promise.resolve();
      },
      upsertUser: () => Promise.reject(new Error('not expected')),
      checkReplay: (command: Command) => {
        replayChecks.push(command);
        return Promise.resolve(options.replay ?? { kind: 'ok' });
      },
    },
    tenants: {
      assertKnown: (tenantId: string) =>
        known.has(tenantId)
          ? Promise.resolve()
          : Promise.reject(new UnknownTenantError('unknown tenant', { tenantId })),
    },
    versions,
  });
  return { handler, moderated, deleted, replayChecks, versions };
}

const message = (value: unknown, headers: IHeaders = {}) => ({
  value: Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)),
  headers,
});

describe('IngestCommandHandler', () => {
  it('applies a valid ingest command through the moderation use case, noting its configuration version', async () => {
    const t = setup();
    const verdict = await t.handler.handle(message(ingestCommand({ configVersion: 7 })), log);
    expect(verdict).toEqual({ kind: 'done' });
    expect(t.moderated).toHaveLength(1);
    expect(t.moderated[0]).toMatchObject({ tenantId: 'ten_1', clientId: 'post-1', commandId: 'cmd_1', sampled: true });
    expect(t.versions.of('ten_1')).toBe(7);
    expect(t.versions.confirmedAt('ten_1', 7)).toBe(0);
  });

  it("confirms a confirmed command's version as of when the gateway accepted it, never later than now", async () => {
    const t = setup();
    const issuedAt = new Date(Date.now() - 5_000).toISOString();
    await t.handler.handle(message(ingestCommand({ configVersion: 7, configConfirmed: true, issuedAt })), log);
    expect(t.versions.confirmedAt('ten_1', 7)).toBe(Date.parse(issuedAt));
    const future = new Date(Date.now() + 60_000).toISOString();
    await t.handler.handle(
      message(ingestCommand({ id: 'cmd_2', configVersion: 7, configConfirmed: true, issuedAt: future })),
      log,
    );
    expect(t.versions.confirmedAt('ten_1', 7)).toBeLessThan(Date.parse(future));
  });

  it.each([
    ['invalid JSON', '{"id": "cmd_1", ', 'invalid_json'],
    [
      'an invalid command',
      { ...ingestCommand(), data: { name: 'no clientId' } },
      'invalid_command: data.clientId,data.entity,data.content',
    ],
    ['a command of an unknown tenant', ingestCommand({ tenantId: 'ten_gone' }), 'unknown_tenant'],
  ])('sets aside %s with its reason and applies nothing', async (_name, value, reason) => {
    const t = setup();
    expect(await t.handler.handle(message(value), log)).toEqual({ kind: 'dead', reason });
    expect(t.moderated).toHaveLength(0);
  });

  it('sets aside a replay older than a change stored since as stale_replay', async () => {
    const t = setup({ replay: { kind: 'newer', stream: 's', type: 'RecordUpserted', version: 3, occurredAt: 'x' } });
    const verdict = await t.handler.handle(message(ingestCommand(), { [HEADERS.replayOf]: 'ten_1/post-1@2' }), log);
    expect(verdict).toEqual({ kind: 'dead', reason: 'stale_replay' });
    expect(t.replayChecks).toHaveLength(1);
    expect(t.moderated).toHaveLength(0);
  });

  it('applies a replay that no newer change overtook, and a forced one without checking', async () => {
    const forced = setup({
      replay: { kind: 'newer', stream: 's', type: 'RecordUpserted', version: 3, occurredAt: 'x' },
    });
    const headers = { [HEADERS.replayOf]: 'x', [HEADERS.replayForce]: 'true' };
    expect(await forced.handler.handle(message(ingestCommand(), headers), log)).toEqual({ kind: 'done' });
    expect(forced.replayChecks).toHaveLength(0);
    expect(forced.moderated).toHaveLength(1);
    const fresh = setup();
    expect(await fresh.handler.handle(message(ingestCommand(), { [HEADERS.replayOf]: 'x' }), log)).toEqual({
      kind: 'done',
    });
    expect(fresh.replayChecks).toHaveLength(1);
    expect(fresh.moderated).toHaveLength(1);
  });

  it('throws a conflict with concurrent writers, to be retried, rather than setting the command aside', async () => {
    const t = setup({ failures: [new ConflictError('busy')] });
    await expect(t.handler.handle(message(ingestCommand()), log)).rejects.toBeInstanceOf(ConflictError);
    expect(await t.handler.handle(message(ingestCommand()), log)).toEqual({ kind: 'done' });
  });

  it('sets aside a command the use case rejects for good, with the error code as its reason', async () => {
    const t = setup({ failures: [new ValidationError('name too long')] });
    expect(await t.handler.handle(message(ingestCommand()), log)).toEqual({ kind: 'dead', reason: 'validation_error' });
  });

  it('counts a delete of a record that does not exist as done', async () => {
    const t = setup({ deleteFails: new NotFoundError('record not found') });
    const remove = ingestCommand({ type: 'DeleteRecord', data: { clientId: 'post-1' } });
    expect(await t.handler.handle(message(remove), log)).toEqual({ kind: 'done' });
  });
});
