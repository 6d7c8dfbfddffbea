import closeWithGrace from 'close-with-grace';
import type { Logger } from 'pino';

export interface ShutdownPhases {
  /** Stop taking work: readiness 503, close listeners, disconnect consumers. */
  stopIntake: () => Promise<void>;
  /** Finish what was taken: flush producers and outboxes, wait for in-flight work. */
  drain: () => Promise<void>;
  /** Release the rest: database clients, timers. */
  close: () => Promise<void>;
}

/**
 * Runs the phases in order on SIGTERM/SIGINT (or an uncaught error) under a force-exit timer of `timeoutMs`.
 * Exit code 0 after a clean signal-initiated shutdown.
 */
export function installShutdown(log: Logger, timeoutMs: number, phases: ShutdownPhases): void {
  closeWithGrace(
    { delay: timeoutMs, logger: { error: (msg: unknown) => log.error({ err: msg }, 'shutdown error') } },
    async ({ signal, err }) => {
      if (err) log.error({ err }, 'fatal error, shutting down');
      else log.info({ signal }, 'shutting down');
      await phases.stopIntake();
      await phases.drain();
      await phases.close();
      log.info('shutdown complete');
    },
  );
}
