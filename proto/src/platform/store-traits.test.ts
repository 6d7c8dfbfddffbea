import { FERRETDB_STATEMENTS_PER_COMMAND, statementChunks } from './store-traits';

describe('statementChunks', () => {
  const statements = Array.from({ length: 10 }, (_, index) => index);

  it('sends a bulk write to MongoDB in one command, whatever its size', () => {
    expect(statementChunks({ ferretdb: false }, statements)).toEqual([statements]);
  });

  it('sends a bulk write to FerretDB a few statements at a time, in order', () => {
    const chunks = statementChunks({ ferretdb: true }, statements);
    expect(chunks.flat()).toEqual(statements);
    expect(Math.max(...chunks.map((chunk) => chunk.length))).toBe(FERRETDB_STATEMENTS_PER_COMMAND);
    expect(chunks).toHaveLength(Math.ceil(statements.length / FERRETDB_STATEMENTS_PER_COMMAND));
    expect(statementChunks({ ferretdb: true }, statements.slice(0, 2))).toEqual([[0, 1]]);
  });
});
