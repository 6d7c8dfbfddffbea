'use strict';
// Installs the chart-checking tools once into the cache (`~/.cache/vigil/tools`, or VIGIL_CACHE_DIR/tools):
//   - helm and kubeconform, built from their Go modules with `go install` (the Go module proxy is reachable where
//     release downloads are not);
//   - Kubernetes JSON schemas for kubeconform, taken from the `kubernetes-validate` wheel on PyPI (it bundles the
//     schemas generated from each Kubernetes release's OpenAPI document), so validation needs no network at run time.
// Every artefact lands in a temporary folder first and is renamed into place, so parallel first runs cannot leave a
// half-written tool behind. Usage: `node deploy/tools/install.js` prints the paths as JSON.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { CACHE_DIR, run, onPath, say } = require('../local/util');

const VERSIONS = Object.freeze({
  helm: 'v3.16.4',
  kubeconform: 'v0.6.7',
  kubernetesValidate: '1.37.0',
  /** Kubernetes versions the rendered manifests are validated against: the oldest the chart supports, the newest. */
  kubernetes: Object.freeze(['1.29.0', '1.37.0']),
});

/** Minor version of the k8s.io modules helm ${VERSIONS.helm} is built with (its Makefile stamps it the same way). */
const HELM_KUBERNETES_MINOR = '31';

const TOOLS_DIR = path.join(CACHE_DIR, 'tools');

function exists(file) {
  try {
    fs.accessSync(file);
    return true;
  } catch {
    return false;
  }
}

/** Builds `target` into a scratch folder with `build(scratch)` and renames it into place; keeps a winner's copy. */
async function installAtomically(target, build) {
  if (exists(target)) return target;
  fs.mkdirSync(path.dirname(target), { recursive: true });
  const scratch = fs.mkdtempSync(`${target}.partial-`);
  try {
    const produced = await build(scratch);
    try {
      fs.renameSync(produced, target);
    } catch (err) {
      // Another process finished first: its copy is as good as ours.
      if (!exists(target)) throw err;
    }
    return target;
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

async function goInstall(name, modulePath, version, ldflags = []) {
  const target = path.join(TOOLS_DIR, `${name}-${version}`, name);
  return installAtomically(target, async (scratch) => {
    if (!onPath('go')) throw new Error(`go is not on PATH: it is needed once to build ${name}`);
    say(`building ${name} ${version} from ${modulePath} (first run only)`);
    const bin = path.join(scratch, 'bin');
    const flags = ldflags.length > 0 ? [`-ldflags=${ldflags.join(' ')}`] : [];
    await run('go', ['install', ...flags, `${modulePath}@${version}`], {
      env: { ...process.env, GOBIN: bin, CGO_ENABLED: '0', GOFLAGS: '-buildvcs=false' },
    });
    return path.join(bin, name);
  });
}

// Unpacks one version's strict schemas from the wheel. The wheel's files point at each other with absolute `$ref`s
// under an `$id` of kubernetes.io; dropping the `$id` and making the references relative lets kubeconform resolve
// them from the folder.
const EXTRACT_PY = `
import json, os, sys, zipfile
wheel, version, out = sys.argv[1], sys.argv[2], sys.argv[3]
prefix = 'kubernetes_validate/kubernetes-json-schema/v%s-local-strict/' % version
os.makedirs(out)
count = 0
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if not (name.startswith(prefix) and name.endswith('.json')):
            continue
        text = z.read(name).decode('utf-8').replace('"/api/_definitions.json', '"_definitions.json')
        doc = json.loads(text)
        doc.pop('$id', None)
        with open(os.path.join(out, name[len(prefix):]), 'w') as f:
            json.dump(doc, f)
        count += 1
if count == 0:
    sys.exit('no schemas for Kubernetes %s in %s' % (version, wheel))
`;

async function kubernetesSchemas(kubernetesVersions, wheelVersion) {
  // Laid out as kubeconform's `{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}` expects.
  const root = path.join(TOOLS_DIR, `kubernetes-json-schema-${wheelVersion}`);
  const missing = kubernetesVersions.filter((version) => !exists(path.join(root, `v${version}-standalone-strict`)));
  if (missing.length === 0) return root;
  const python = onPath('python3') ? 'python3' : 'python';
  say(`fetching Kubernetes ${missing.join(', ')} JSON schemas (kubernetes-validate ${wheelVersion}, first run only)`);
  const download = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-wheel-'));
  try {
    await run(python, [
      '-m',
      'pip',
      'download',
      '--quiet',
      '--no-deps',
      '--only-binary=:all:',
      '--dest',
      download,
      `kubernetes-validate==${wheelVersion}`,
    ]);
    const wheel = fs.readdirSync(download).find((file) => file.endsWith('.whl'));
    if (!wheel) throw new Error('pip download produced no wheel for kubernetes-validate');
    for (const version of missing) {
      await installAtomically(path.join(root, `v${version}-standalone-strict`), async (scratch) => {
        const out = path.join(scratch, 'schemas');
        await run(python, ['-c', EXTRACT_PY, path.join(download, wheel), version, out]);
        return out;
      });
    }
  } finally {
    fs.rmSync(download, { recursive: true, force: true });
  }
  return root;
}

/**
 * Holds a cross-process lock (a directory) while `work` runs, so parallel test workers build each tool once. A lock
 * older than `staleMs` is a leftover of a killed run and is taken over.
 */
async function withLock(name, work, staleMs = 20 * 60 * 1000) {
  fs.mkdirSync(TOOLS_DIR, { recursive: true });
  const lock = path.join(TOOLS_DIR, `${name}.lock`);
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch (err) {
      if (/** @type {NodeJS.ErrnoException} */ (err).code !== 'EEXIST') throw err;
      try {
        if (Date.now() - fs.statSync(lock).mtimeMs > staleMs) fs.rmSync(lock, { recursive: true, force: true });
      } catch {
        // Released meanwhile: try again.
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  try {
    return await work();
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

/** Installs what is missing and returns absolute paths. */
async function ensureTools() {
  return withLock('install', installAll);
}

async function installAll() {
  const [helm, kubeconform, schemaRoot] = await Promise.all([
    // The release build stamps these; without them helm reports version "v3.16" and renders for Kubernetes 1.20.
    goInstall('helm', 'helm.sh/helm/v3/cmd/helm', VERSIONS.helm, [
      `-X helm.sh/helm/v3/internal/version.version=${VERSIONS.helm}`,
      ...['pkg/chartutil', 'pkg/lint/rules'].flatMap((pkg) => [
        `-X helm.sh/helm/v3/${pkg}.k8sVersionMajor=1`,
        `-X helm.sh/helm/v3/${pkg}.k8sVersionMinor=${HELM_KUBERNETES_MINOR}`,
      ]),
    ]),
    goInstall('kubeconform', 'github.com/yannh/kubeconform/cmd/kubeconform', VERSIONS.kubeconform),
    kubernetesSchemas(VERSIONS.kubernetes, VERSIONS.kubernetesValidate),
  ]);
  return {
    helm,
    kubeconform,
    kubernetesVersions: VERSIONS.kubernetes,
    /** For `kubeconform -schema-location`. */
    schemaLocation: path.join(
      schemaRoot,
      '{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}',
      '{{ .ResourceKind }}{{ .KindSuffix }}.json',
    ),
    versions: VERSIONS,
  };
}

module.exports = { ensureTools, VERSIONS, TOOLS_DIR };

if (require.main === module) {
  const started = Date.now();
  ensureTools()
    .then((tools) => {
      process.stdout.write(`${JSON.stringify({ ...tools, seconds: (Date.now() - started) / 1000 }, null, 2)}${os.EOL}`);
    })
    .catch((err) => {
      process.stderr.write(`${err.stack || err.message}\n`);
      process.exit(1);
    });
}
