// A service is a list of feature modules. Each feature folder exports one factory that builds its module from the
// service's shared parts; the service's `app.ts` lists them. The list starts the modules in order and stops them in
// the reverse order, in the shutdown phases `runService` calls: a module that stops taking work (a consumer, a
// server) stops before the ones it hands work to (a relay, a pool).
import type { Logger } from 'pino';
import type { RunningService } from './service-main';

/** One feature of a service, as its `app.ts` lists it. Every member but `name` is optional. */
export interface FeatureModule {
  /** Names the feature in logs and in `docs/architecture.md`. */
  readonly name: string;
  /** Runs once every module is built, in list order: timers start, consumers join their groups. */
  start?(): Promise<void> | void;
  /** Whether the feature can take work now (readiness). A module without it is ready once started. */
  ready?(): Promise<boolean> | boolean;
  /** Shutdown phase 1, in reverse list order: take no more work. */
  stopIntake?(): Promise<void> | void;
  /** Shutdown phase 2, in reverse list order: finish the work taken, close clients. */
  drain?(): Promise<void> | void;
}

/** The type field every event a reaction reads carries. */
export interface TypedEvent {
  readonly type: string;
}

/**
 * Work that runs after a commit, on the event types it declares (outline's `applicableEvents`). A reaction's failure
 * is the commit's caller's to handle: the events are committed, so a reaction must be safe to miss or run again.
 */
export interface Reaction<E extends TypedEvent> {
  readonly name: string;
  /** The event types the reaction reads; the others are never passed to it. */
  readonly applicableEvents: readonly E['type'][];
  react(events: E[]): Promise<void>;
}

/**
 * Runs each reaction on the committed events of its types, all at once; reactions with none of them do not run. It
 * settles once every reaction has ended, and then rejects with the first failure: a caller that runs the events again
 * never overlaps a reaction still running from the failed turn.
 */
export function runReactions<E extends TypedEvent>(reactions: readonly Reaction<E>[]): (events: E[]) => Promise<void> {
  const wanted = reactions.map((reaction) => ({ reaction, types: new Set<string>(reaction.applicableEvents) }));
  return async (events) => {
    const runs: Promise<void>[] = [];
    for (const { reaction, types } of wanted) {
      const applicable = events.filter((event) => types.has(event.type));
      if (applicable.length > 0) runs.push(reaction.react(applicable));
    }
    const failed = (await Promise.allSettled(runs)).find((run) => run.status === 'rejected');
    if (failed) throw failed.reason;
  };
}

/**
 * The modules of one service, started in order and stopped in reverse. A module that fails to stop is logged and the
 * others still stop: one stuck feature must not keep the rest of the process from shutting down cleanly.
 */
export class ModuleList implements RunningService {
  private stopped = false;

  constructor(
    private readonly log: Logger,
    readonly modules: readonly FeatureModule[],
  ) {}

  /** Starts each module in list order; a start that throws stops the service's start (the caller retries or exits). */
  async start(): Promise<void> {
    for (const module of this.modules) await module.start?.();
  }

  async ready(): Promise<boolean> {
    if (this.stopped) return false;
    const answers = await Promise.all(this.modules.map(async (module) => (module.ready ? module.ready() : true)));
    return answers.every(Boolean);
  }

  async stopIntake(): Promise<void> {
    this.stopped = true;
    await this.inReverse('stopIntake');
  }

  async drain(): Promise<void> {
    await this.inReverse('drain');
  }

  private async inReverse(phase: 'stopIntake' | 'drain'): Promise<void> {
    for (const module of [...this.modules].reverse()) {
      try {
        await module[phase]?.();
      } catch (err) {
        this.log.error({ err, module: module.name, phase }, 'feature module failed to stop');
      }
    }
  }
}
