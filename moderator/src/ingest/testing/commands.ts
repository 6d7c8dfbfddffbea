// For specs: an ingest command as the gateway publishes it (tenant `ten_1`, record `post-1`), with the fields a spec
// changes.

export const ingestCommand = (overrides: Record<string, unknown> = {}) => ({
  id: 'cmd_1',
  type: 'IngestRecord',
  tenantId: 'ten_1',
  issuedAt: '2026-01-01T00:00:00.000Z',
  correlationId: 'corr_1',
  moderationId: 'mod_1',
  data: { clientId: 'post-1', name: 'Hello', entity: 'post', content: { text: 'hello' } },
  ...overrides,
});
