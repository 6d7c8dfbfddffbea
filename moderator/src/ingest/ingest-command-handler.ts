import { Command, HEADERS, type TenantVersions } from '@vigil/proto';
import type { KafkaMessage } from 'kafkajs';
import type { Logger } from 'pino';
import { AppError, NotFoundError } from '../domain/errors';
import type { moderate } from '../service/moderate';
import type { deleteRecord } from '../service/record-decisions';
import type { checkReplay } from '../service/replay-check';
import type { rerunModeration } from '../service/rerun';
import type { upsertUser } from '../service/user-decisions';
import type { KnownTenants } from '../store/known-tenants';
import { headerText } from '../kafka/headers';
import type { IngestHandler, Verdict } from './ingest-consumer';

/** A use case with its first argument (the process's use-case parts, or the store) already given. */
type Applied<F> = F extends (deps: never, ...args: infer A) => infer R ? (...args: A) => R : never;

/** The use cases commands apply (see `ingest.module.ts`), as the spec fakes them. */
interface IngestUseCases {
  moderate: Applied<typeof moderate>;
  rerunModeration: Applied<typeof rerunModeration>;
  deleteRecord: Applied<typeof deleteRecord>;
  upsertUser: Applied<typeof upsertUser>;
  checkReplay: Applied<typeof checkReplay>;
}

export interface IngestCommandHandlerOptions {
  service: IngestUseCases;
  /** Commands for a tenant that does not exist are dead-lettered (`unknown_tenant`), never applied or retried. */
  tenants: Pick<KnownTenants, 'assertKnown'>;
  /** Each command's tenant configuration version is recorded here before the command is applied. */
  versions: Pick<TenantVersions, 'observe' | 'confirm'>;
}

/**
 * One ingest command, from the message to its verdict: `done` once applied (or found applied, or a delete of what is
 * gone); `dead` with a reason for a command that can never succeed (invalid JSON, invalid command, unknown tenant, a
 * replay older than a stored change, a non-retriable AppError). Throws what is worth retrying: a conflict with
 * concurrent writers, a store or provider outage.
 */
export class IngestCommandHandler implements IngestHandler {
  constructor(private readonly options: IngestCommandHandlerOptions) {}

  async handle(message: Pick<KafkaMessage, 'value' | 'headers'>, log: Logger): Promise<Verdict> {
    let json: unknown;
    try {
      json = JSON.parse(message.value?.toString('utf8') ?? '');
    } catch {
      return { kind: 'dead', reason: 'invalid_json' };
    }
    const parsed = Command.safeParse(json);
    if (!parsed.success) {
      const where = parsed.error.issues.map((issue) => issue.path.join('.') || '(root)').join(',');
      return { kind: 'dead', reason: `invalid_command: ${where}` };
    }
    const command = parsed.data;
    if (command.configConfirmed) {
      // Confirmed when the gateway accepted it (by its clock, never later than now): a backlog confirms nothing new.
      const issuedAt = Date.parse(command.issuedAt);
      const at = Number.isFinite(issuedAt) ? Math.min(issuedAt, Date.now()) : 0;
      this.options.versions.confirm(command.tenantId, command.configVersion ?? 0, at);
    } else this.options.versions.observe(command.tenantId, command.configVersion);
    const context = { tenantId: command.tenantId, correlationId: command.correlationId };
    const commandLog = log.child({ commandId: command.id, type: command.type, tenantId: command.tenantId });
    try {
      await this.options.tenants.assertKnown(command.tenantId);
      const replayOf = headerText(message.headers, HEADERS.replayOf);
      if (replayOf !== undefined && headerText(message.headers, HEADERS.replayForce) !== 'true') {
        // Checked again here, not only when the operator replayed it: a newer command of the record may have been
        // waiting in the topic ahead of the replay.
        const check = await this.options.service.checkReplay(command);
        if (check.kind === 'newer') {
          commandLog.warn({ replayOf, newer: check }, 'replayed command older than a stored change, set aside');
          return { kind: 'dead', reason: 'stale_replay' };
        }
      }
      switch (command.type) {
        case 'IngestRecord': {
          const { data } = command;
          const result = await this.options.service.moderate({
            ...context,
            clientId: data.clientId,
            clientUrl: data.clientUrl,
            name: data.name,
            entity: data.entity,
            content: data.content,
            metadata: data.metadata,
            user: data.user,
            passthrough: false,
            commandId: command.id,
            sampled: command.moderationId !== null,
            moderationId: command.moderationId ?? undefined,
          });
          commandLog.debug(
            {
              recordId: result.recordId,
              status: result.status,
              duplicate: result.duplicate,
              skipped: result.skipped ?? false,
            },
            'ingest applied',
          );
          break;
        }
        case 'RerunModeration': {
          const rerun = await this.options.service.rerunModeration({
            ...context,
            clientId: command.data.clientId,
            moderationId: command.data.moderationId,
            commandId: command.id,
          });
          if (!rerun) commandLog.info('record to re-moderate is gone or passthrough');
          break;
        }
        case 'DeleteRecord':
          await this.options.service.deleteRecord({
            ...context,
            clientId: command.data.clientId,
            commandId: command.id,
          });
          break;
        case 'IngestUser':
          await this.options.service.upsertUser({ ...context, user: command.data });
          break;
      }
      return { kind: 'done' };
    } catch (err) {
      if (err instanceof NotFoundError && command.type === 'DeleteRecord') {
        commandLog.info('record to delete does not exist');
        return { kind: 'done' };
      }
      // A conflict lost to concurrent writers is retried, like any retriable failure.
      if (err instanceof AppError && !err.retriable && err.code !== 'conflict') {
        commandLog.warn({ code: err.code }, 'ingest command rejected');
        return { kind: 'dead', reason: err.code };
      }
      throw err;
    }
  }
}
