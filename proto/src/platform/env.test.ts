import { z } from 'zod';
import { envLoaders, MongoUrl } from './env';

describe('MongoUrl (MONGO_URL)', () => {
  it.each([
    'mongodb://127.0.0.1:40351/',
    'mongodb://localhost',
    'mongodb://user:pass@mongo-0:27017,mongo-1:27017/vigil?replicaSet=rs0&authSource=admin',
    'mongodb+srv://cluster0.example.net/',
  ])('accepts %j', (value) => {
    expect(MongoUrl.safeParse(value).success).toBe(true);
  });

  it.each([
    ['a version number', '3.9.1'],
    ['host and port without scheme', 'localhost:27017'],
    ['another scheme', 'postgres://localhost:5432/'],
    ['no host', 'mongodb://'],
    ['port 99999', 'mongodb://localhost:99999/'],
    ['a port with mongodb+srv', 'mongodb+srv://cluster0.example.net:27017/'],
    ['an unknown option', 'mongodb://localhost/?replicaset=rs0&bogus=1'],
    ['nothing', ''],
  ])('refuses %s (%j)', (_name, value) => {
    expect(MongoUrl.safeParse(value).success).toBe(false);
  });

  it('keeps the user and password out of the message when the driver quotes the string', () => {
    const parsed = MongoUrl.safeParse('mongodb://admin:s3cret-pw@/');
    expect(parsed.success).toBe(false);
    const message = parsed.error?.issues.map((issue) => issue.message).join('\n') ?? '';
    expect(message).toContain('MongoDB connection string');
    expect(message).not.toContain('s3cret-pw');
    expect(message).not.toContain('admin:');
  });
});

describe('envLoaders', () => {
  const { loadConfig, loadConfigOf } = envLoaders(
    z.object({
      PORT: z.coerce.number().int().default(8080),
      NAME: z.string().min(1),
      LEVEL: z.enum(['info', 'debug']),
    }),
  );

  it('parses the whole environment, frozen, and names every bad variable at once', () => {
    const config = loadConfig({ NAME: 'vigil', LEVEL: 'debug' });
    expect(config).toEqual({ PORT: 8080, NAME: 'vigil', LEVEL: 'debug' });
    expect(Object.isFrozen(config)).toBe(true);
    expect(() => loadConfig({ PORT: 'x', LEVEL: 'loud' })).toThrow(/PORT[\s\S]*NAME[\s\S]*LEVEL/);
  });

  it('parses only the variables named, with their defaults, whatever the others hold', () => {
    expect(loadConfigOf(['PORT', 'NAME'], { NAME: 'vigil', LEVEL: 'loud' })).toEqual({ PORT: 8080, NAME: 'vigil' });
    expect(() => loadConfigOf(['LEVEL'], { NAME: 'vigil', LEVEL: 'loud' })).toThrow(/LEVEL/);
  });
});
