import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { COLLECTION_MAP, COLLECTIONS, type CollectionSpec, type ServiceName } from './collections';
import { scanSource, violations, type Touch } from './testing/collection-scan';

const ROOT = resolve(__dirname, '../..');
const SERVICES: readonly ServiceName[] = ['gateway', 'moderator', 'notifier'];

/** A service's source files: `src/**\/*.ts` without its specs and their support (`*.test.ts`, `testing/`). */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'testing' ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

function scanService(service: ServiceName): Touch[] {
  return sourceFiles(join(ROOT, service, 'src')).flatMap((path) =>
    scanSource(relative(ROOT, path), readFileSync(path, 'utf8'), COLLECTION_MAP),
  );
}

const touches = new Map(SERVICES.map((service) => [service, scanService(service)]));

describe('COLLECTION_MAP', () => {
  it('names each collection once, and COLLECTIONS gives the same names', () => {
    const names = Object.values(COLLECTION_MAP).map((spec) => spec.name);
    expect(new Set(names).size).toBe(names.length);
    for (const [key, spec] of Object.entries(COLLECTION_MAP)) {
      expect(COLLECTIONS[key as keyof typeof COLLECTIONS]).toBe(spec.name);
    }
  });

  it('lists readers and writers other than the owner, each with a reason', () => {
    for (const spec of Object.values(COLLECTION_MAP) as CollectionSpec[]) {
      for (const use of [...spec.readers, ...(spec.writers ?? [])]) {
        expect(use.service).not.toBe(spec.owner);
        expect(use.reason.length).toBeGreaterThan(10);
      }
    }
  });

  it.each(SERVICES)(
    'the %s touches only collections the map gives it, and writes only those it may write',
    (service) => {
      const scanned = touches.get(service) ?? [];
      expect(scanned.length).toBeGreaterThan(0);
      expect(violations(service, scanned, COLLECTION_MAP)).toEqual([]);
    },
  );

  it.each(SERVICES)('each collection the map lets the %s read is read by it (no stale reader)', (service) => {
    const used = new Set((touches.get(service) ?? []).map((touch) => touch.collection));
    const declared = Object.entries(COLLECTION_MAP as Record<string, CollectionSpec>)
      .filter(([, spec]) => spec.readers.some((use) => use.service === service))
      .map(([key]) => key);
    expect(declared.filter((key) => !used.has(key))).toEqual([]);
  });
});

/**
 * README.md's flow figure lists each read across services as `<reader> ◄── <owner>'s <name>, …`, and would list a
 * writer exception as `<writer> ──► <owner>'s <name>, …`.
 */
function figureEdges(readme: string): string[] {
  const edges: string[] = [];
  for (const m of readme.matchAll(/^ {2}(\w+) +(◄──|──►) (\w+)'s (.+)$/gm)) {
    const [, service, arrow, owner, names] = m;
    const kind = arrow === '◄──' ? 'reads' : 'writes';
    for (const name of (names ?? '').split(',')) edges.push(`${service} ${kind} ${owner}'s ${name.trim()}`);
  }
  return edges.sort();
}

function mapEdges(): string[] {
  const edges = new Set<string>();
  for (const spec of Object.values(COLLECTION_MAP) as CollectionSpec[]) {
    for (const use of spec.readers) edges.add(`${use.service} reads ${spec.owner}'s ${spec.name}`);
    for (const use of spec.writers ?? []) edges.add(`${use.service} writes ${spec.owner}'s ${spec.name}`);
  }
  return [...edges].sort();
}

describe("README.md's flow figure", () => {
  it('draws exactly the reads and writer exceptions across services that the map declares', () => {
    expect(figureEdges(readFileSync(join(ROOT, 'README.md'), 'utf8'))).toEqual(mapEdges());
  });
});

describe('scanSource', () => {
  const map: Record<string, CollectionSpec> = {
    jobs: { name: 'jobs', owner: 'gateway', readers: [{ service: 'moderator', reason: 'reads the job it runs' }] },
    runs: { name: 'runs', owner: 'moderator', readers: [] },
    notes: {
      name: 'notes',
      owner: 'gateway',
      readers: [],
      writers: [{ service: 'notifier', reason: 'marks a note sent until the gateway does it itself' }],
    },
  };
  const scan = (source: string): Touch[] => scanSource('fixture.ts', source, map);

  it.each<[string, Touch['access'], string]>([
    ['a chained read', 'read', `db.collection(COLLECTIONS.jobs).findOne({ _id })`],
    ['a chained write', 'write', `db.collection<Job>(COLLECTIONS.jobs).updateOne({ _id }, { $set })`],
    ['a field handle only read', 'read', `this.jobs = db.collection(COLLECTIONS.jobs); this.jobs.find({}).toArray();`],
    [
      'a field handle written',
      'write',
      `this.jobs = db.collection(COLLECTIONS.jobs);\nawait this.jobs\n  .insertOne(doc);`,
    ],
    ['a local handle written', 'write', `const jobs = db.collection(COLLECTIONS.jobs); await jobs.deleteMany({});`],
    ['a literal name, indexed', 'write', `this.j = db.collection('jobs'); await this.j.createIndex({ a: 1 });`],
    [
      'a handle handed to a write helper',
      'write',
      `this.j = db.collection(COLLECTIONS.jobs); insertUnlessExists(this.j, d);`,
    ],
    [
      'a handle handed on in a file that writes nothing',
      'read',
      `this.log = new Log(db.collection(COLLECTIONS.jobs));`,
    ],
    [
      'a handle handed on in a file that writes',
      'write',
      `new Queue(db.collection(COLLECTIONS.jobs)); this.x.updateOne({}, {});`,
    ],
  ])('reads %s as a %s', (_, access, source) => {
    expect(scan(source)).toEqual([{ file: 'fixture.ts', collection: 'jobs', access }]);
  });

  it('does not count a collection named in a comment', () => {
    expect(scan(`// COLLECTIONS.jobs is written elsewhere\n/* db.collection('runs').drop() */ const a = 1;`)).toEqual(
      [],
    );
  });

  it('reports a collection the service neither owns nor reads', () => {
    const found = violations('notifier', scan(`db.collection(COLLECTIONS.runs).findOne({})`), map);
    expect(found).toEqual([
      { service: 'notifier', file: 'fixture.ts', collection: 'runs', problem: 'is neither owned nor read' },
    ]);
  });

  it('reports a write by a service the map lets only read', () => {
    const source = `this.jobs = db.collection(COLLECTIONS.jobs);\nawait this.jobs.updateOne({ _id }, { $set: { cancel: true } });`;
    expect(violations('moderator', scan(source), map)).toEqual([
      { service: 'moderator', file: 'fixture.ts', collection: 'jobs', problem: 'is written but only read' },
    ]);
  });

  it('reports a collection the map does not name', () => {
    expect(violations('gateway', scan(`db.collection('scratch').insertOne({})`), map)).toEqual([
      { service: 'gateway', file: 'fixture.ts', collection: 'scratch', problem: 'is not in COLLECTION_MAP' },
    ]);
  });

  it('accepts the owner, a declared reader and a declared writer exception', () => {
    const write = scan(`db.collection(COLLECTIONS.notes).updateOne({}, {})`);
    const read = scan(`db.collection(COLLECTIONS.jobs).findOne({})`);
    expect(violations('gateway', [...write, ...read], map)).toEqual([]);
    expect(violations('moderator', read, map)).toEqual([]);
    expect(violations('notifier', write, map)).toEqual([]);
  });
});
