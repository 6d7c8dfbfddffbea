import { createRequire } from 'node:module';
import path from 'node:path';
import { bundledWeightShards, exportedString } from './bundled-weights';

const moderatorRequire = createRequire(path.join(__dirname, '..', '..', '..', 'package.json'));
const nsfwjsEntry = moderatorRequire.resolve('nsfwjs');

describe('exportedString', () => {
  it('reads the base64 literal a browserified shard exports', () => {
    const script = '!function(i){module.exports=i()}(function(){return{1:[function(i,m,h){m.exports="QUJD+/8="},{}]}})';
    expect(exportedString(script)).toBe('QUJD+/8=');
  });

  it('leaves out a script that exports no base64 literal', () => {
    expect(exportedString('module.exports=42')).toBeUndefined();
    expect(exportedString('m.exports="not base64: quotes \\" and spaces"')).toBeUndefined();
    expect(exportedString('m.exports="')).toBeUndefined();
    expect(exportedString('m.exports="QUJD==="')).toBeUndefined();
    expect(exportedString('m.exports="=="')).toBeUndefined();
    expect(exportedString('m.exports="QU=JD"')).toBeUndefined();
  });
});

/** A weight's bytes in a shard, by the dtype it is stored as (its quantization's, when quantized). */
const BYTES: Record<string, number> = { float32: 4, int32: 4, float16: 2, uint16: 2, uint8: 1, bool: 1 };

interface ManifestWeight {
  shape: number[];
  dtype: string;
  quantization?: { dtype: string };
}

describe('bundledWeightShards', () => {
  it.each([
    ['MobileNetV2', 'mobilenet_v2', ['group1_shard1of1']],
    ['MobileNetV2Mid', 'mobilenet_v2_mid', ['group1_shard1of2', 'group1_shard2of2']],
  ] as const)(
    'reads every weight shard of %s in the installed nsfwjs, named as nsfwjs looks them up, to the byte',
    (model, folder, names) => {
      const shards = bundledWeightShards(model, nsfwjsEntry);
      expect(Object.keys(shards).sort()).toEqual(names);
      // As many bytes as the model's own manifest says its weights take.
      const modelJson = moderatorRequire(
        path.join(path.dirname(nsfwjsEntry), '..', 'models', folder, 'model.min.js'),
      ) as {
        weightsManifest: { weights: ManifestWeight[] }[];
      };
      const expected = modelJson.weightsManifest
        .flatMap((group) => group.weights)
        .reduce(
          (sum, weight) =>
            sum + weight.shape.reduce((n, d) => n * d, 1) * (BYTES[weight.quantization?.dtype ?? weight.dtype] ?? NaN),
          0,
        );
      const decoded = Object.values(shards).reduce((sum, base64) => sum + Buffer.from(base64, 'base64').length, 0);
      expect(expected).toBeGreaterThan(1_000_000);
      expect(decoded).toBe(expected);
    },
  );
});
