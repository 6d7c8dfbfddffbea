// What the rest of the moderator uses of the engine. The engine itself is rule-engine.ts.
export { createEngine } from './rule-engine';
export { ProviderError } from './types';
export type { EngineInput, EngineResult, ModerationEngine, PriorDecision } from './types';
export type { LlmOptions } from './llm';
export { OffLoopPool, workerFile } from './off-loop';
export { ActivityGate } from './activity-gate';
export { ImageFetcher } from './images/fetch';
export { OcrPool } from './images/ocr-pool';
export { VerdictCache } from './images/judge-images';
export type { ImageOptions } from './images/judge-images';
