import { GrpcTarget } from './grpc-target';

describe('GrpcTarget (MODERATOR_ADDRESS)', () => {
  it.each([
    '127.0.0.1:50051',
    'vigil-moderator:50051',
    'dns:///vigil-moderator-headless.moderation.svc.cluster.local:50051',
    'dns://10.0.0.10:53/vigil-moderator-headless:50051',
    'dns:vigil-moderator:50051',
    '[::1]:50051',
    'ipv4:127.0.0.1:50051,127.0.0.1:50151',
    'ipv6:[::1]:50051',
  ])('accepts %j', (value) => {
    expect(GrpcTarget.safeParse(value).success).toBe(true);
  });

  it.each([
    ['a version number', '3.9.1'],
    ['a name without port (gRPC would dial 443)', 'vigil-moderator'],
    ['dns without port', 'dns:///vigil-moderator-headless'],
    ['port 0', '127.0.0.1:0'],
    ['an http URL', 'http://vigil-moderator:50051'],
    ['nothing', ''],
    ['an address list with one entry without port', 'ipv4:127.0.0.1:50051,127.0.0.1'],
    ['an empty address list', 'ipv4:'],
  ])('refuses %s (%j)', (_name, value) => {
    expect(GrpcTarget.safeParse(value).success).toBe(false);
  });
});
