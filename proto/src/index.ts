export * from './events';
export * from './commands';
export * from './ids';
export * from './topics';
export * from './loader';
export * from './settings';
export * from './reports';
export * from './policies';
export * from './statements';
export * from './emails';
export * from './appeal-token';
export * from './secret-box';
export * from './payments';
export * from './transparency-db';
export * from './webhooks';
export * from './projections';
export * from './collections';
export * from './limits';
export * from './grpc-errors';
export * from './webhook-addresses';
export type {
  ModerationServiceClient,
  ModerationServiceHandlers,
} from './generated/vigil/moderation/v1/ModerationService';
export * from './tenant-versions';
export * from './backtests';
export * from './retroactions';
export * from './rule-precision';
export * from './transparency-report';
export * from './hash-banks';
export * from './hash-feeds';
