import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { ProtoGrpcType } from './generated/moderation';

/**
 * The one set of loader options. `proto-loader-gen-types` is run with the same values (see package.json
 * `generate`), so the generated types describe exactly what the loader produces.
 */
export const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: false,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
};

/** Folder that holds `vigil/moderation/v1/*.proto`; the same relative place from `src/` and `dist/`. */
const PROTO_ROOT = path.resolve(__dirname, '..');
const MODERATION_PROTO = 'vigil/moderation/v1/moderation.proto';

export function loadModerationPackage(): ProtoGrpcType {
  const definition = protoLoader.loadSync(MODERATION_PROTO, { ...LOADER_OPTIONS, includeDirs: [PROTO_ROOT] });
  return grpc.loadPackageDefinition(definition) as unknown as ProtoGrpcType;
}
