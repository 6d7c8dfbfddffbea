import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { topicNames } from '@vigil/proto';
import { variables } from '../../tools/env-docs';
import {
  byKind,
  CHART_DIR,
  chartTools,
  helm,
  named,
  renderChart,
  validateManifests,
  type Manifest,
  type Rendered,
} from '../../tools/chart';

// The chart, checked offline: helm lint, helm template, kubeconform against the Kubernetes schemas, and the
// properties the operations guide promises. helm and kubeconform are built into ~/.cache/vigil on a first run.
const SERVICES = ['gateway', 'moderator', 'notifier'] as const;
const ADMIN_PORTS = { gateway: 9090, moderator: 9091, notifier: 9092 };
const OLD_SPACE_MB = { gateway: 176, moderator: 272, notifier: 176 };
// Kafka and MongoDB are external: the only values an install must give.
const CONNECTION = {
  'mongo.url': 'mongodb://mongo-0.mongo:27017/?replicaSet=rs0',
  'kafka.brokers': 'kafka-0.kafka:9092,kafka-1.kafka:9092',
};
const EVERYTHING_ON = {
  'mongo.existingSecret': 'vigil-mongo',
  'kafka.existingSecret': 'vigil-kafka',
  'moderatorAuth.existingSecret': 'vigil-grpc',
  'secretsEncryption.existingSecret': 'vigil-sealing',
  'ingress.enabled': true,
  'networkPolicy.enabled': true,
  'serviceMonitor.enabled': true,
  ...Object.fromEntries(
    SERVICES.flatMap((name) => [
      [`services.${name}.autoscaling.enabled`, true],
      [`services.${name}.pdb.enabled`, true],
    ]),
  ),
};

function container(deployment: Manifest): Manifest {
  const containers = deployment.spec.template.spec.containers as Manifest[];
  expect(containers).toHaveLength(1);
  const [first] = containers;
  if (!first) throw new Error(`${deployment.metadata.name} has no container`);
  return first;
}

function checksumOf(rendered: Rendered, service: string): string {
  return named(rendered, 'Deployment', `vigil-${service}`).spec.template.metadata.annotations[
    'checksum/config'
  ] as string;
}

function selectorOf(rendered: Rendered, service: string): Record<string, string> {
  return named(rendered, 'Deployment', `vigil-${service}`).spec.selector.matchLabels as Record<string, string>;
}

function hasPdb(rendered: Rendered, service: string): boolean {
  return byKind(rendered, 'PodDisruptionBudget').some((pdb) => pdb.metadata.name === `vigil-${service}`);
}

/** The consumer group a service joins when its env does not set KAFKA_GROUP_ID: the default in its config.ts. */
function defaultGroup(service: 'moderator' | 'notifier'): string {
  const group = variables(service).find((v) => v.name === 'KAFKA_GROUP_ID')?.default;
  if (!group) throw new Error(`${service}/src/config.ts has no default KAFKA_GROUP_ID`);
  return group;
}

let scratch: string;
function valuesFile(name: string, text: string): string {
  const file = path.join(scratch, name);
  fs.writeFileSync(file, text);
  return file;
}

beforeAll(
  async () => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-chart-'));
    // First run builds helm and kubeconform from source and fetches the schemas: minutes, then cached.
    await chartTools();
  },
  15 * 60 * 1000,
);

afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

describe('vigil chart', () => {
  test('helm lint --strict passes with only the connection values', async () => {
    const setArgs = Object.entries(CONNECTION).flatMap(([key, value]) => [
      '--set-string',
      `${key}=${value.replace(/,/g, '\\,')}`,
    ]);
    const output = await helm(['lint', CHART_DIR, '--strict', ...setArgs]);
    expect(output).toContain('1 chart(s) linted, 0 chart(s) failed');
  });

  describe('default values', () => {
    let rendered: Rendered;
    beforeAll(async () => {
      rendered = await renderChart(CONNECTION);
    });

    test('render valid Kubernetes objects (strict schema validation)', async () => {
      const result = await validateManifests(rendered.text);
      expect(result.output).toMatch(/Invalid: 0, Errors: 0/);
      expect(result.ok).toBe(true);
      expect(rendered.manifests.map((m) => m.kind).sort()).toEqual([
        ...['ConfigMap', 'ConfigMap', 'ConfigMap', 'Deployment', 'Deployment', 'Deployment', 'Job'],
        ...['NetworkPolicy', 'NetworkPolicy', 'NetworkPolicy'],
        ...['PodDisruptionBudget', 'PodDisruptionBudget', 'PodDisruptionBudget', 'Secret', 'Secret', 'Secret'],
        ...['Service', 'Service', 'Service', 'Service'],
      ]);
    });

    test('one template renders all three workloads', () => {
      const deployments = byKind(rendered, 'Deployment');
      expect(deployments.map((d) => d.metadata.name).sort()).toEqual([
        'vigil-gateway',
        'vigil-moderator',
        'vigil-notifier',
      ]);
      const sources = rendered.manifests
        .map((manifest, i) => ({ kind: manifest.kind, source: rendered.sources[i] }))
        .filter(({ kind }) => kind === 'Deployment' || kind === 'Service');
      expect(new Set(sources.map(({ source }) => source))).toEqual(new Set(['vigil/templates/workloads.yaml']));
    });

    test.each(SERVICES)('%s: probes on the admin port, grace period above the shutdown timeout', (service) => {
      const deployment = named(rendered, 'Deployment', `vigil-${service}`);
      const main = container(deployment);
      const admin = (main.ports as Manifest[]).find((port) => port.name === 'admin');
      expect(admin?.containerPort).toBe(ADMIN_PORTS[service]);
      expect(main.livenessProbe.httpGet).toEqual({ path: '/livez', port: 'admin' });
      expect(main.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'admin' });
      const config = named(rendered, 'ConfigMap', `vigil-${service}`).data as Record<string, string>;
      expect(config.ADMIN_PORT).toBe(String(ADMIN_PORTS[service]));
      expect(config.SHUTDOWN_TIMEOUT_MS).toBe('20000');
      // Services create missing topics themselves too; they must agree with the topics Job.
      expect(config.KAFKA_TOPIC_PARTITIONS).toBe('6');
      // V8 collects before the container's memory limit: about 70 % of it.
      expect(config.NODE_OPTIONS).toBe(`--max-old-space-size=${OLD_SPACE_MB[service]}`);
      expect(deployment.spec.template.spec.terminationGracePeriodSeconds).toBe(30);
      expect(main.envFrom).toEqual([{ configMapRef: { name: `vigil-${service}` } }]);
      expect(main.env).toContainEqual({
        name: 'MONGO_URL',
        valueFrom: { secretKeyRef: { name: 'vigil-mongo', key: 'MONGO_URL' } },
      });
      const service_ = named(rendered, 'Service', `vigil-${service}`);
      expect(service_.spec.ports).toContainEqual(
        expect.objectContaining({ name: 'admin', port: ADMIN_PORTS[service], targetPort: 'admin' }),
      );
    });

    test.each(SERVICES)('%s: restricted security context and a writable /tmp only', (service) => {
      const pod = named(rendered, 'Deployment', `vigil-${service}`).spec.template.spec;
      expect(pod.securityContext).toMatchObject({
        runAsNonRoot: true,
        runAsUser: 10001,
        seccompProfile: { type: 'RuntimeDefault' },
      });
      expect(pod.automountServiceAccountToken).toBe(false);
      expect(pod.enableServiceLinks).toBe(false);
      const main = container(named(rendered, 'Deployment', `vigil-${service}`));
      expect(main.securityContext).toMatchObject({
        runAsNonRoot: true,
        runAsUser: 10001,
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
        seccompProfile: { type: 'RuntimeDefault' },
      });
      expect(main.volumeMounts).toEqual([{ name: 'tmp', mountPath: '/tmp' }]);
      expect(pod.volumes).toEqual([{ name: 'tmp', emptyDir: { sizeLimit: '64Mi' } }]);
    });

    test('the moderator also has a headless Service for client-side gRPC balancing', () => {
      const headless = named(rendered, 'Service', 'vigil-moderator-headless');
      expect(headless.spec.clusterIP).toBe('None');
      expect(headless.spec.selector).toEqual(
        named(rendered, 'Deployment', 'vigil-moderator').spec.selector.matchLabels,
      );
      expect(headless.spec.ports).toEqual([{ name: 'grpc', port: 50051, targetPort: 'grpc', protocol: 'TCP' }]);
      expect(byKind(rendered, 'Service').filter((service) => service.spec.clusterIP === 'None')).toHaveLength(1);
    });

    test('the gateway reaches every moderator pod through the headless Service', () => {
      const moderator = named(rendered, 'Service', 'vigil-moderator-headless');
      const grpc = (moderator.spec.ports as Manifest[]).find((port) => port.name === 'grpc');
      expect(grpc?.port).toBe(50051);
      expect(named(rendered, 'ConfigMap', 'vigil-gateway').data.MODERATOR_ADDRESS).toBe(
        `dns:///vigil-moderator-headless:${grpc?.port}`,
      );
      expect(named(rendered, 'ConfigMap', 'vigil-gateway').data.KAFKA_BROKERS).toBe(CONNECTION['kafka.brokers']);
      expect(Buffer.from(named(rendered, 'Secret', 'vigil-mongo').data.MONGO_URL as string, 'base64').toString()).toBe(
        CONNECTION['mongo.url'],
      );
    });

    test('NetworkPolicy is on: the moderator gRPC port admits only gateway pods, admin ports any source', () => {
      const gatewayPods = named(rendered, 'Deployment', 'vigil-gateway').spec.selector.matchLabels as Manifest;
      for (const service of SERVICES) {
        const policy = named(rendered, 'NetworkPolicy', `vigil-${service}`);
        expect(policy.spec.podSelector.matchLabels).toEqual(
          named(rendered, 'Deployment', `vigil-${service}`).spec.selector.matchLabels,
        );
        expect(policy.spec.policyTypes).toEqual(['Ingress']);
        const rules = policy.spec.ingress as Manifest[];
        const admin = rules.find((rule) => rule.ports[0].port === 'admin');
        expect(admin).toEqual({ ports: [{ port: 'admin', protocol: 'TCP' }] });
        // Every port the pod opens has a rule, and no rule opens a port the pod lacks.
        const ports = (container(named(rendered, 'Deployment', `vigil-${service}`)).ports as Manifest[]).map(
          (port) => port.name as string,
        );
        expect(rules.map((rule) => rule.ports[0].port as string).sort()).toEqual(ports.sort());
      }
      const grpcRule = (named(rendered, 'NetworkPolicy', 'vigil-moderator').spec.ingress as Manifest[]).find(
        (rule) => rule.ports[0].port === 'grpc',
      );
      expect(grpcRule?.from).toEqual([{ podSelector: { matchLabels: gatewayPods } }]);
    });

    test('the gateway and the moderator read the gRPC token from a generated Secret; the notifier does not', () => {
      const secret = named(rendered, 'Secret', 'vigil-moderator-token');
      const token = Buffer.from(secret.data.MODERATOR_GRPC_TOKEN as string, 'base64').toString();
      expect(token).toMatch(/^[A-Za-z0-9]{64}$/);
      const ref = {
        name: 'MODERATOR_GRPC_TOKEN',
        valueFrom: { secretKeyRef: { name: 'vigil-moderator-token', key: 'MODERATOR_GRPC_TOKEN' } },
      };
      for (const service of ['gateway', 'moderator'] as const) {
        expect(container(named(rendered, 'Deployment', `vigil-${service}`)).env).toContainEqual(ref);
        expect(named(rendered, 'ConfigMap', `vigil-${service}`).data.MODERATOR_GRPC_TOKEN).toBeUndefined();
      }
      expect(container(named(rendered, 'Deployment', 'vigil-notifier')).env).not.toContainEqual(ref);
    });

    test('every service reads SECRETS_ENCRYPTION_KEY from a generated Secret kept on uninstall', () => {
      const secret = named(rendered, 'Secret', 'vigil-secrets-encryption');
      expect(secret.metadata.annotations['helm.sh/resource-policy']).toBe('keep');
      const key = Buffer.from(secret.data.SECRETS_ENCRYPTION_KEY as string, 'base64').toString();
      // The variable holds base64 of 32 random bytes, as the services' configuration requires.
      expect(Buffer.from(key, 'base64')).toHaveLength(32);
      const ref = {
        name: 'SECRETS_ENCRYPTION_KEY',
        valueFrom: { secretKeyRef: { name: 'vigil-secrets-encryption', key: 'SECRETS_ENCRYPTION_KEY' } },
      };
      // The moderator opens hash feed credentials; the gateway and the notifier, payments keys.
      for (const service of ['gateway', 'notifier', 'moderator'] as const) {
        expect(container(named(rendered, 'Deployment', `vigil-${service}`)).env).toContainEqual(ref);
        expect(named(rendered, 'ConfigMap', `vigil-${service}`).data.SECRETS_ENCRYPTION_KEY).toBeUndefined();
      }
    });

    test('the topics Job runs before install and upgrade with the moderator image', () => {
      const job = named(rendered, 'Job', 'vigil-topics');
      expect(job.metadata.annotations['helm.sh/hook']).toBe('pre-install,pre-upgrade');
      const main = job.spec.template.spec.containers[0] as Manifest;
      expect(main.image).toBe(container(named(rendered, 'Deployment', 'vigil-moderator')).image);
      expect(main.command).toEqual(['node', 'init-topics.js']);
      expect(main.env).toEqual(
        expect.arrayContaining([
          { name: 'KAFKA_BROKERS', value: CONNECTION['kafka.brokers'] },
          { name: 'TOPIC_PARTITIONS', value: '6' },
          { name: 'TOPIC_REPLICATION_FACTOR', value: '-1' },
        ]),
      );
      expect(main.securityContext.readOnlyRootFilesystem).toBe(true);
    });

    test("the old-generation limit can be left to Node's default, or set through env", async () => {
      const changed = await renderChart({
        ...CONNECTION,
        'services.moderator.maxOldSpaceMB': 0,
        'services.notifier.env.NODE_OPTIONS': '--max-old-space-size=64',
      });
      expect(named(changed, 'ConfigMap', 'vigil-moderator').data.NODE_OPTIONS).toBeUndefined();
      expect(named(changed, 'ConfigMap', 'vigil-notifier').data.NODE_OPTIONS).toBe('--max-old-space-size=64');
    });

    test('the checksum annotation follows the configuration of its own service', async () => {
      for (const service of SERVICES) expect(checksumOf(rendered, service)).toMatch(/^[0-9a-f]{64}$/);
      const changed = await renderChart({ ...CONNECTION, 'services.notifier.env.WEBHOOK_TIMEOUT_MS': '5000' });
      expect(named(changed, 'ConfigMap', 'vigil-notifier').data.WEBHOOK_TIMEOUT_MS).toBe('5000');
      expect(checksumOf(changed, 'notifier')).not.toBe(checksumOf(rendered, 'notifier'));
      expect(checksumOf(changed, 'gateway')).toBe(checksumOf(rendered, 'gateway'));
      // A token given as a value rolls the two services that use it.
      const token = await renderChart({ ...CONNECTION, 'moderatorAuth.token': 'a'.repeat(40) });
      expect(checksumOf(token, 'gateway')).not.toBe(checksumOf(rendered, 'gateway'));
      expect(checksumOf(token, 'moderator')).not.toBe(checksumOf(rendered, 'moderator'));
      expect(checksumOf(token, 'notifier')).toBe(checksumOf(rendered, 'notifier'));
      expect(
        Buffer.from(
          named(token, 'Secret', 'vigil-moderator-token').data.MODERATOR_GRPC_TOKEN as string,
          'base64',
        ).toString(),
      ).toBe('a'.repeat(40));
      // So does an encryption key given as a value, for every service (each reads it).
      const sealing = Buffer.alloc(32, 7).toString('base64');
      const keyed = await renderChart({ ...CONNECTION, 'secretsEncryption.key': sealing });
      expect(checksumOf(keyed, 'gateway')).not.toBe(checksumOf(rendered, 'gateway'));
      expect(checksumOf(keyed, 'notifier')).not.toBe(checksumOf(rendered, 'notifier'));
      expect(checksumOf(keyed, 'moderator')).not.toBe(checksumOf(rendered, 'moderator'));
      expect(
        Buffer.from(
          named(keyed, 'Secret', 'vigil-secrets-encryption').data.SECRETS_ENCRYPTION_KEY as string,
          'base64',
        ).toString(),
      ).toBe(sealing);
      // The chart-owned connection Secret is part of every service's configuration.
      const moved = await renderChart({ ...CONNECTION, 'mongo.url': 'mongodb://elsewhere:27017' });
      for (const service of SERVICES) expect(checksumOf(moved, service)).not.toBe(checksumOf(rendered, service));
    });
  });

  describe('every optional part on', () => {
    let rendered: Rendered;
    beforeAll(async () => {
      rendered = await renderChart(EVERYTHING_ON);
    });

    test('renders valid Kubernetes objects', async () => {
      // ServiceMonitor is a custom resource with no bundled schema; its shape is checked below.
      const result = await validateManifests(rendered.text, ['ServiceMonitor']);
      expect(result.output).toMatch(/Invalid: 0, Errors: 0/);
      expect(result.ok).toBe(true);
      const count = (kind: string) => byKind(rendered, kind).length;
      expect([count('HorizontalPodAutoscaler'), count('PodDisruptionBudget'), count('NetworkPolicy')]).toEqual([
        3, 3, 3,
      ]);
      expect([count('Ingress'), count('ServiceMonitor'), count('Secret')]).toEqual([1, 1, 0]);
    });

    test('autoscaled Deployments leave replicas to their HPA', () => {
      for (const service of SERVICES) {
        const hpa = named(rendered, 'HorizontalPodAutoscaler', `vigil-${service}`);
        expect(hpa.spec.scaleTargetRef).toEqual({
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          name: `vigil-${service}`,
        });
        expect(named(rendered, 'Deployment', `vigil-${service}`).spec.replicas).toBeUndefined();
      }
    });

    test('connection settings, the gRPC token and the encryption key come from the existing Secrets', () => {
      for (const service of SERVICES) {
        const env = container(named(rendered, 'Deployment', `vigil-${service}`)).env as Manifest[];
        expect(env).toEqual([
          { name: 'MONGO_URL', valueFrom: { secretKeyRef: { name: 'vigil-mongo', key: 'MONGO_URL' } } },
          { name: 'KAFKA_BROKERS', valueFrom: { secretKeyRef: { name: 'vigil-kafka', key: 'KAFKA_BROKERS' } } },
          ...(service === 'notifier'
            ? []
            : [
                {
                  name: 'MODERATOR_GRPC_TOKEN',
                  valueFrom: { secretKeyRef: { name: 'vigil-grpc', key: 'MODERATOR_GRPC_TOKEN' } },
                },
              ]),
          {
            name: 'SECRETS_ENCRYPTION_KEY',
            valueFrom: { secretKeyRef: { name: 'vigil-sealing', key: 'SECRETS_ENCRYPTION_KEY' } },
          },
        ]);
        expect(named(rendered, 'ConfigMap', `vigil-${service}`).data.KAFKA_BROKERS).toBeUndefined();
      }
    });

    test('the ServiceMonitor scrapes the admin port of all three Services; the Ingress targets the gateway', () => {
      const monitor = named(rendered, 'ServiceMonitor', 'vigil');
      expect(monitor.apiVersion).toBe('monitoring.coreos.com/v1');
      expect(monitor.spec.endpoints).toEqual([expect.objectContaining({ port: 'admin', path: '/metrics' })]);
      const selector = monitor.spec.selector.matchLabels as Record<string, string>;
      const selected = byKind(rendered, 'Service').filter((service) =>
        Object.entries(selector).every(
          ([key, value]) => (service.metadata.labels as Record<string, string>)[key] === value,
        ),
      );
      // The headless Service matches too but has no admin port, so it yields no scrape target.
      const scraped = selected.filter((service) =>
        (service.spec.ports as Manifest[]).some((port) => port.name === 'admin'),
      );
      expect(scraped.map((service) => service.metadata.name).sort()).toEqual([
        'vigil-gateway',
        'vigil-moderator',
        'vigil-notifier',
      ]);
      const ingress = named(rendered, 'Ingress', 'vigil-gateway');
      expect(ingress.spec.rules[0].http.paths[0].backend).toEqual({
        service: { name: 'vigil-gateway', port: { name: 'http' } },
      });
    });

    test('only the gateway may call the moderator over gRPC', () => {
      const policy = named(rendered, 'NetworkPolicy', 'vigil-moderator');
      const grpcRule = (policy.spec.ingress as Manifest[]).find((rule) => rule.ports[0].port === 'grpc');
      expect(grpcRule?.from).toEqual([
        { podSelector: { matchLabels: named(rendered, 'Deployment', 'vigil-gateway').spec.selector.matchLabels } },
      ]);
    });
  });

  test('a long release name keeps every Service name a valid DNS label', async () => {
    const release = 'a-rather-long-release-name-for-a-production-cluster-x';
    expect(release.length).toBe(53); // Helm's own limit
    const output = await helm([
      'template',
      release,
      CHART_DIR,
      '--set-string',
      'mongo.url=mongodb://m:27017',
      '--set-string',
      'kafka.brokers=k:9092',
    ]);
    const names = [...output.matchAll(/^kind: Service\nmetadata:\n {2}name: (\S+)$/gm)].map(([, name = '']) => name);
    expect(names).toHaveLength(4);
    for (const name of names) expect(name).toMatch(/^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/);
  });

  describe('replicas, disruptions and spreading', () => {
    let rendered: Rendered;
    beforeAll(async () => {
      rendered = await renderChart(CONNECTION);
    });

    test.each(SERVICES)('%s: a PodDisruptionBudget by default at 2 replicas, one pod evicted at a time', (service) => {
      expect(named(rendered, 'Deployment', `vigil-${service}`).spec.replicas).toBe(2);
      const pdb = named(rendered, 'PodDisruptionBudget', `vigil-${service}`);
      expect(pdb.apiVersion).toBe('policy/v1');
      expect(pdb.spec).toEqual({ maxUnavailable: 1, selector: { matchLabels: selectorOf(rendered, service) } });
    });

    test('no PodDisruptionBudget for a service that may run a single pod', async () => {
      const single = await renderChart({ ...CONNECTION, 'services.notifier.replicas': 1 });
      expect(hasPdb(single, 'notifier')).toBe(false);
      expect(hasPdb(single, 'gateway')).toBe(true);
      expect(hasPdb(single, 'moderator')).toBe(true);
      // Autoscaled, the minimum counts, not `replicas`.
      const scaledToOne = await renderChart({
        ...CONNECTION,
        'services.moderator.autoscaling.enabled': true,
        'services.moderator.autoscaling.minReplicas': 1,
      });
      expect(hasPdb(scaledToOne, 'moderator')).toBe(false);
      const scaledFromThree = await renderChart({
        ...CONNECTION,
        'services.moderator.replicas': 1,
        'services.moderator.autoscaling.enabled': true,
        'services.moderator.autoscaling.minReplicas': 3,
      });
      expect(hasPdb(scaledFromThree, 'moderator')).toBe(true);
    });

    test('a PodDisruptionBudget can keep a floor instead, or be turned off', async () => {
      const changed = await renderChart({
        ...CONNECTION,
        'services.gateway.pdb.minAvailable': '50%',
        'services.moderator.pdb.enabled': false,
      });
      expect(named(changed, 'PodDisruptionBudget', 'vigil-gateway').spec).toEqual({
        minAvailable: '50%',
        selector: { matchLabels: selectorOf(changed, 'gateway') },
      });
      expect(hasPdb(changed, 'moderator')).toBe(false);
    });

    test.each(SERVICES)('%s: pods spread over nodes by default, as a preference', (service) => {
      const pod = named(rendered, 'Deployment', `vigil-${service}`).spec.template.spec;
      expect(pod.topologySpreadConstraints).toEqual([
        {
          topologyKey: 'kubernetes.io/hostname',
          maxSkew: 1,
          whenUnsatisfiable: 'ScheduleAnyway',
          labelSelector: { matchLabels: selectorOf(rendered, service) },
          matchLabelKeys: ['pod-template-hash'],
        },
      ]);
    });

    test('the OCR values give the moderator the memory of an image thread that reads text', async () => {
      const rendered = await renderChart(CONNECTION, ['-f', path.join(CHART_DIR, '..', 'values-ocr.yaml')]);
      const moderator = container(named(rendered, 'Deployment', 'vigil-moderator'));
      expect(moderator.resources).toEqual({ requests: { cpu: '500m', memory: '768Mi' }, limits: { memory: '1Gi' } });
      expect(named(rendered, 'ConfigMap', 'vigil-moderator').data).toMatchObject({
        IMAGE_THREADS: '1',
        IMAGE_OCR: 'true',
      });
      // The other services keep their defaults.
      expect(container(named(rendered, 'Deployment', 'vigil-notifier')).resources).toEqual({
        requests: { cpu: '100m', memory: '128Mi' },
        limits: { memory: '256Mi' },
      });
      const result = await validateManifests(rendered.text);
      expect(result.output).toMatch(/Invalid: 0, Errors: 0/);
    });

    test('the spread is configurable: zones too, as a rule, replaced for one service, or off', async () => {
      const zones = valuesFile(
        'zones.yaml',
        [
          'topologySpread:',
          '  topologyKeys: [kubernetes.io/hostname, topology.kubernetes.io/zone]',
          '  whenUnsatisfiable: DoNotSchedule',
          'services:',
          '  notifier:',
          '    topologySpreadConstraints:',
          '      - { topologyKey: kubernetes.io/hostname, maxSkew: 2, whenUnsatisfiable: ScheduleAnyway }',
          '',
        ].join('\n'),
      );
      const changed = await renderChart(CONNECTION, ['-f', zones]);
      const constraints = (service: string) =>
        named(changed, 'Deployment', `vigil-${service}`).spec.template.spec.topologySpreadConstraints as Manifest[];
      expect(constraints('moderator').map((c) => [c.topologyKey, c.whenUnsatisfiable])).toEqual([
        ['kubernetes.io/hostname', 'DoNotSchedule'],
        ['topology.kubernetes.io/zone', 'DoNotSchedule'],
      ]);
      expect(constraints('notifier')).toEqual([
        { topologyKey: 'kubernetes.io/hostname', maxSkew: 2, whenUnsatisfiable: 'ScheduleAnyway' },
      ]);
      const result = await validateManifests(changed.text);
      expect(result.output).toMatch(/Invalid: 0, Errors: 0/);
      const off = await renderChart({ ...CONNECTION, 'topologySpread.enabled': false });
      for (const service of SERVICES) {
        expect(
          named(off, 'Deployment', `vigil-${service}`).spec.template.spec.topologySpreadConstraints,
        ).toBeUndefined();
      }
    });
  });

  describe('autoscaling on Kafka consumer lag (KEDA)', () => {
    const LAG = {
      ...CONNECTION,
      ...Object.fromEntries(SERVICES.map((name) => [`services.${name}.autoscaling.enabled`, true])),
      'services.moderator.autoscaling.kafkaLag.enabled': true,
      'services.notifier.autoscaling.kafkaLag.enabled': true,
    };
    const topics = topicNames();
    // What each service reads, from the code: the group in its config.ts, the topics it subscribes to.
    const READS = {
      moderator: { group: defaultGroup('moderator'), topics: [topics.ingest] },
      notifier: { group: defaultGroup('notifier'), topics: [topics.events, topics.webhookCommands] },
    };
    let rendered: Rendered;
    beforeAll(async () => {
      rendered = await renderChart(LAG);
    });

    function kafkaTriggers(scaled: Rendered, service: string): Manifest[] {
      const triggers = named(scaled, 'ScaledObject', `vigil-${service}`).spec.triggers as Manifest[];
      return triggers.filter((trigger) => trigger.type === 'kafka');
    }

    test('renders valid Kubernetes objects; the gateway keeps its CPU HPA, the consumers get no HPA', async () => {
      // ScaledObject is a custom resource with no bundled schema; its shape is checked below.
      const result = await validateManifests(rendered.text, ['ScaledObject']);
      expect(result.output).toMatch(/Invalid: 0, Errors: 0/);
      expect(result.ok).toBe(true);
      expect(byKind(rendered, 'HorizontalPodAutoscaler').map((hpa) => hpa.metadata.name)).toEqual(['vigil-gateway']);
      expect(named(rendered, 'HorizontalPodAutoscaler', 'vigil-gateway').spec.metrics).toEqual([
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } },
      ]);
      expect(
        byKind(rendered, 'ScaledObject')
          .map((scaled) => scaled.metadata.name)
          .sort(),
      ).toEqual(['vigil-moderator', 'vigil-notifier']);
    });

    test.each(['moderator', 'notifier'] as const)(
      '%s: a ScaledObject on the lag of its group on each topic it reads, and on CPU',
      (service) => {
        const scaled = named(rendered, 'ScaledObject', `vigil-${service}`);
        expect(scaled.apiVersion).toBe('keda.sh/v1alpha1');
        expect(scaled.spec).toMatchObject({
          scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: `vigil-${service}` },
          minReplicaCount: 2,
          maxReplicaCount: 6,
          pollingInterval: 15,
        });
        expect(kafkaTriggers(rendered, service)).toEqual(
          READS[service].topics.map((topic) => ({
            type: 'kafka',
            metadata: {
              bootstrapServers: CONNECTION['kafka.brokers'],
              consumerGroup: READS[service].group,
              topic,
              lagThreshold: '1000',
              offsetResetPolicy: 'earliest',
            },
          })),
        );
        const triggers = scaled.spec.triggers as Manifest[];
        expect(triggers.filter((trigger) => trigger.type !== 'kafka')).toEqual([
          { type: 'cpu', metricType: 'Utilization', metadata: { value: '70' } },
        ]);
        // KEDA's CRD takes trigger metadata as strings only.
        for (const trigger of triggers) {
          for (const value of Object.values(trigger.metadata)) expect(typeof value).toBe('string');
        }
        // Replicas are left to the HPA that KEDA creates.
        expect(named(rendered, 'Deployment', `vigil-${service}`).spec.replicas).toBeUndefined();
      },
    );

    test('topic names follow the prefix, the group follows KAFKA_GROUP_ID, brokers may come from a Secret', async () => {
      const changed = await renderChart({
        ...LAG,
        'kafka.topicPrefix': 'prod.',
        'kafka.existingSecret': 'vigil-kafka',
        'services.notifier.env.KAFKA_GROUP_ID': 'vigil-notifier-blue',
        'services.moderator.autoscaling.kafkaLag.lagThreshold': 250,
      });
      const prefixed = topicNames('prod.');
      expect(kafkaTriggers(changed, 'moderator').map((trigger) => trigger.metadata)).toEqual([
        {
          bootstrapServersFromEnv: 'KAFKA_BROKERS',
          consumerGroup: READS.moderator.group,
          topic: prefixed.ingest,
          lagThreshold: '250',
          offsetResetPolicy: 'earliest',
        },
      ]);
      expect(
        kafkaTriggers(changed, 'notifier').map((trigger) => [trigger.metadata.consumerGroup, trigger.metadata.topic]),
      ).toEqual([
        ['vigil-notifier-blue', prefixed.events],
        ['vigil-notifier-blue', prefixed.webhookCommands],
      ]);
      // KEDA resolves bootstrapServersFromEnv in the Deployment's container: the variable must be there.
      for (const service of ['moderator', 'notifier']) {
        expect(container(named(changed, 'Deployment', `vigil-${service}`)).env).toContainEqual({
          name: 'KAFKA_BROKERS',
          valueFrom: { secretKeyRef: { name: 'vigil-kafka', key: 'KAFKA_BROKERS' } },
        });
      }
    });

    test('off by default: CPU HPAs for every autoscaled service, no ScaledObject', async () => {
      const cpuOnly = await renderChart(EVERYTHING_ON);
      expect(byKind(cpuOnly, 'ScaledObject')).toHaveLength(0);
      expect(
        byKind(cpuOnly, 'HorizontalPodAutoscaler')
          .map((hpa) => hpa.metadata.name)
          .sort(),
      ).toEqual(['vigil-gateway', 'vigil-moderator', 'vigil-notifier']);
    });

    test('the default maximum of each consumer fits the default partition count', () => {
      const partitions = Number(named(rendered, 'ConfigMap', 'vigil-moderator').data.KAFKA_TOPIC_PARTITIONS);
      expect(partitions).toBe(Number(variables('moderator').find((v) => v.name === 'KAFKA_TOPIC_PARTITIONS')?.default));
      for (const service of ['moderator', 'notifier']) {
        expect(named(rendered, 'ScaledObject', `vigil-${service}`).spec.maxReplicaCount).toBeLessThanOrEqual(
          partitions,
        );
      }
    });
  });

  describe('wrong values are rejected', () => {
    test.each([
      [
        'replicas as a word',
        'services:\n  gateway:\n    replicas: three\n',
        /services\.gateway\.replicas: Invalid type/,
      ],
      [
        'an unknown service',
        'services:\n  frontend:\n    replicas: 1\n',
        /Additional property frontend is not allowed/,
      ],
      [
        'an image tag that is not a string',
        'services:\n  moderator:\n    image:\n      tag: 1.2\n',
        /services\.moderator\.image\.tag: Invalid type\. Expected: string/,
      ],
      [
        'a non-string env value',
        'services:\n  notifier:\n    env:\n      WEBHOOK_TIMEOUT_MS: 5000\n',
        /WEBHOOK_TIMEOUT_MS: Invalid type/,
      ],
      ['an unknown log level', 'logLevel: verbose\n', /logLevel/],
      ['a gRPC token shorter than 32 characters', 'moderatorAuth:\n  token: short\n', /moderatorAuth\.token/],
      [
        'lag autoscaling for the gateway, which reads no topic',
        'services:\n  gateway:\n    autoscaling:\n      kafkaLag:\n        enabled: true\n',
        /Additional property kafkaLag is not allowed/,
      ],
      [
        'a lag threshold of zero',
        'services:\n  moderator:\n    autoscaling:\n      kafkaLag:\n        lagThreshold: 0\n',
        /services\.moderator\.autoscaling\.kafkaLag\.lagThreshold/,
      ],
      [
        'an unknown spread policy',
        'topologySpread:\n  whenUnsatisfiable: Sometimes\n',
        /topologySpread\.whenUnsatisfiable/,
      ],
      [
        'a disruption budget that is neither a count nor a percentage',
        'services:\n  notifier:\n    pdb:\n      maxUnavailable: half\n',
        /services\.notifier\.pdb\.maxUnavailable/,
      ],
      [
        'an encryption key that is not 32 bytes of base64',
        'secretsEncryption:\n  key: short\n',
        /secretsEncryption\.key/,
      ],
    ])('by the values schema: %s', async (_what, yaml, message) => {
      const file = valuesFile(`${_what.replace(/\W+/g, '-')}.yaml`, yaml);
      await expect(renderChart(CONNECTION, ['-f', file])).rejects.toThrow(message);
    });

    test('without MongoDB and Kafka addresses, with a clear message', async () => {
      await expect(renderChart({ 'kafka.brokers': 'kafka:9092' })).rejects.toThrow(
        /set mongo\.url or mongo\.existingSecret/,
      );
      await expect(renderChart({ 'mongo.url': 'mongodb://m:27017' })).rejects.toThrow(
        /set kafka\.brokers or kafka\.existingSecret/,
      );
    });

    test('lag autoscaling without autoscaling, with a clear message', async () => {
      await expect(
        renderChart({ ...CONNECTION, 'services.notifier.autoscaling.kafkaLag.enabled': true }),
      ).rejects.toThrow(
        /services\.notifier\.autoscaling\.kafkaLag\.enabled needs services\.notifier\.autoscaling\.enabled/,
      );
    });

    test('a grace period that does not cover the shutdown timeout', async () => {
      await expect(renderChart({ ...CONNECTION, terminationGracePeriodSeconds: 15 })).rejects.toThrow(
        /terminationGracePeriodSeconds must exceed/,
      );
    });

    test('the gateway reaches the moderator through its ClusterIP Service when the headless one is off', async () => {
      const rendered = await renderChart({ ...CONNECTION, 'services.moderator.service.headless': false });
      expect(named(rendered, 'ConfigMap', 'vigil-gateway').data.MODERATOR_ADDRESS).toBe('vigil-moderator:50051');
    });

    test('kubeconform itself rejects a broken manifest (the validation can fail)', async () => {
      const rendered = await renderChart(CONNECTION);
      const broken = rendered.text
        .replace('containerPort: 9090', 'containerPort: "nine"')
        .replace('periodSeconds: 10', 'periodSecs: 10');
      expect(broken).not.toBe(rendered.text);
      const result = await validateManifests(broken);
      expect(result.ok).toBe(false);
      expect(result.output).toMatch(/Deployment vigil-gateway is invalid/);
    });
  });
});
