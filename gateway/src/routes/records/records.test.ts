import { issuesOf } from '../../http/validate';
import { ListAppealsQuery } from '../appeals/appeals.schema';
import { ListUsersQuery } from '../users/users.schema';
import { ListRecordsQuery, ManualModerationBody } from './records.schema';

type Schema = { safeParse(input: unknown): { success: boolean; error?: unknown } };
const pathsOf = (schema: Schema, input: unknown) => {
  const result = schema.safeParse(input) as { success: boolean; error?: Parameters<typeof issuesOf>[0] };
  return result.success || !result.error ? [] : issuesOf(result.error).map((issue) => issue.path.join('.'));
};

describe('list queries and actions', () => {
  it.each([
    ['limit 1', ListRecordsQuery, { limit: '1' }, []],
    ['limit 100', ListRecordsQuery, { limit: '100' }, []],
    ['limit 0', ListRecordsQuery, { limit: '0' }, ['limit']],
    ['limit 101', ListRecordsQuery, { limit: '101' }, ['limit']],
    ['limit not a number', ListRecordsQuery, { limit: 'ten' }, ['limit']],
    ['record status Flagged', ListRecordsQuery, { status: 'Flagged' }, []],
    ['record status in lower case', ListRecordsQuery, { status: 'flagged' }, ['status']],
    ['user status Suspended', ListUsersQuery, { status: 'Suspended' }, []],
    ['user status Flagged', ListUsersQuery, { status: 'Flagged' }, ['status']],
    ['appeal status Open', ListAppealsQuery, { status: 'Open' }, []],
    ['a manual Flagged with a reason', ManualModerationBody, { status: 'Flagged', reason: 'spam' }, []],
    ['a manual decision without a reason', ManualModerationBody, { status: 'Compliant' }, ['reason']],
    ['a manual Suspended record', ManualModerationBody, { status: 'Suspended', reason: 'x' }, ['status']],
  ])('%s', (_name, schema, input, expected) => {
    expect(pathsOf(schema, input)).toEqual(expected);
  });

  it('defaults the page size to 10', () => {
    expect(ListRecordsQuery.parse({}).limit).toBe(10);
  });
});
