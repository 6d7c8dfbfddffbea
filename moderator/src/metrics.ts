import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** The moderator's own metrics (the consumer's are ConsumerMetrics, the process's and store's the platform's). */
export type ModeratorMetrics = ReturnType<typeof createMetrics>;

export function createMetrics(registry: Registry) {
  return {
    grpc: new Histogram({
      name: 'moderator_grpc_request_duration_seconds',
      help: 'Duration of ModerationService calls',
      labelNames: ['method', 'outcome'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    ingest: new Counter({
      name: 'moderator_ingest_commands_total',
      help: 'Ingest command attempts by outcome',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    ingestDeadLetters: new Counter({
      name: 'moderator_ingest_dead_letters_total',
      help: 'Ingest commands sent to the dead-letter topic, by reason',
      labelNames: ['reason'],
      registers: [registry],
    }),
    published: new Counter({
      name: 'moderator_outbox_published_events_total',
      help: 'Events relayed to the events topic',
      registers: [registry],
    }),
    offLoop: new Histogram({
      name: 'moderator_engine_task_duration_seconds',
      help: 'Running time of engine tasks in worker threads (waiting excluded), by task and outcome (ok, budget, error)',
      labelNames: ['task', 'outcome'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    images: new Counter({
      name: 'moderator_images_total',
      help: 'Record images by outcome: fetched, judged (or cached: judged before, same bytes), or why not (refused by the address policy, timeout, too_large, not_an_image, http_status, network_error, invalid_url, too_many_pixels, undecodable, budget)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    hashBankMatches: new Counter({
      name: 'moderator_hash_bank_matches_total',
      help: "Images' matches in the tenants' hash banks, by the bank's kind and outcome (matched, or cancelled by a negative bank)",
      labelNames: ['kind', 'outcome'],
      registers: [registry],
    }),
    hashQuarantines: new Counter({
      name: 'moderator_hash_bank_quarantines_total',
      help: 'Bank hashes put in flood quarantine (one hash.quarantined event each)',
      registers: [registry],
    }),
    hashHeldMatches: new Counter({
      name: 'moderator_hash_bank_held_matches_total',
      help: 'Matches of quarantined hashes, by outcome: held for review, or not_kept (past the bound, or held already)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    hashFeedRuns: new Counter({
      name: 'moderator_hash_feed_runs_total',
      help: "Runs of the banks' hash feeds by source (file, stopncii, ncmec), state (ok, unchanged, failed) and failure",
      labelNames: ['source', 'state', 'failure'],
      registers: [registry],
    }),
    hashFeedDeadClaims: new Counter({
      name: 'moderator_hash_feed_dead_claims_total',
      help: 'Claims of hash feed runs (job: run) and feedback (job: feedback) that their replica never recorded (a lost reply, a failed write, a crash), taken over after the lease',
      labelNames: ['job'],
      registers: [registry],
    }),
    imageTexts: new Counter({
      name: 'moderator_image_texts_total',
      help: 'Record images whose text an image-text strategy asked for, by outcome: read (text found), empty (none), or why not (a fetch failure, too_many_pixels, undecodable, budget, no_ocr)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    ocrPauses: new Histogram({
      name: 'moderator_image_ocr_pause_duration_seconds',
      help: 'Pauses of the OCR processes for text-only moderations (IMAGE_OCR_TEXT_FIRST), by how they ended: text_idle, share_cap, no_reading (the reading ended), closed',
      labelNames: ['end'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    heavyYields: new Histogram({
      name: 'moderator_moderate_heavy_yield_seconds',
      help: "Waits of heavy Moderate calls (over 8 KiB) for a moment without other tenants' calls, by outcome (idle: there was one; bound: MODERATE_HEAVY_YIELD_MS ran out; aborted: the caller gave up)",
      labelNames: ['outcome'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
      registers: [registry],
    }),
    heavyYielding: new Gauge({
      name: 'moderator_moderate_heavy_yielding',
      help: "Heavy Moderate calls waiting now for a moment without other tenants' calls",
      registers: [registry],
    }),
    outboxDeadLetters: new Counter({
      name: 'moderator_outbox_dead_letters_total',
      help: 'Stored events the broker refused, set aside instead of published, by reason',
      labelNames: ['reason'],
      registers: [registry],
    }),
  };
}
