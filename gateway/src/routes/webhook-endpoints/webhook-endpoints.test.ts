import { issuesOf } from '../../http/validate';
import { CreateEndpointBody, ReplayBody, RotateSecretBody, UpdateEndpointBody } from './webhook-endpoints.schema';

type Schema = { safeParse(input: unknown): { success: boolean; error?: unknown } };
const pathsOf = (schema: Schema, input: unknown) => {
  const result = schema.safeParse(input) as { success: boolean; error?: Parameters<typeof issuesOf>[0] };
  return result.success || !result.error ? [] : issuesOf(result.error).map((issue) => issue.path.join('.'));
};

describe('webhook endpoint bodies', () => {
  const table: Array<[string, Schema, unknown, string[]]> = [
    ['an https URL', CreateEndpointBody, { url: 'https://a.example/x' }, []],
    ['an http URL', CreateEndpointBody, { url: 'http://a.example/x' }, []],
    ['a ws URL', CreateEndpointBody, { url: 'ws://a.example/x' }, ['url']],
    ['no URL', CreateEndpointBody, {}, ['url']],
    ['known events', CreateEndpointBody, { url: 'https://a.example', events: ['record.flagged', 'user.banned'] }, []],
    ['an unknown event', CreateEndpointBody, { url: 'https://a.example', events: ['record.unflagged'] }, ['events.0']],
    [
      'a repeated event',
      CreateEndpointBody,
      { url: 'https://a.example', events: ['record.flagged', 'user.banned', 'record.flagged'] },
      ['events'],
    ],
    ['a repeated event in a patch', UpdateEndpointBody, { events: ['user.banned', 'user.banned'] }, ['events']],
    ['a given secret', CreateEndpointBody, { url: 'https://a.example', secret: 'whsec_x' }, ['secret']],
    ['an empty patch', UpdateEndpointBody, {}, ['']],
    ['a patch of enabled', UpdateEndpointBody, { enabled: false }, []],
    ['overlap at the 7-day limit', RotateSecretBody, { overlapSeconds: 7 * 86400 }, []],
    ['overlap beyond 7 days', RotateSecretBody, { overlapSeconds: 7 * 86400 + 1 }, ['overlapSeconds']],
    ['a negative overlap', RotateSecretBody, { overlapSeconds: -1 }, ['overlapSeconds']],
    ['replay since an ISO time', ReplayBody, { since: '2026-01-01T00:00:00+02:00' }, []],
    ['replay since a vague time', ReplayBody, { since: 'last week' }, ['since']],
  ];
  it.each(table)('%s', (_name, schema, input, expected) => {
    expect(pathsOf(schema, input)).toEqual(expected);
  });

  it('defaults to every event, enabled, and a one-day overlap', () => {
    expect(CreateEndpointBody.parse({ url: 'https://a.example' })).toEqual({
      url: 'https://a.example',
      events: [],
      enabled: true,
    });
    expect(RotateSecretBody.parse({})).toEqual({ overlapSeconds: 86400 });
  });
});
