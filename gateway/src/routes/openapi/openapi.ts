import { z } from 'zod';
import type { RouteSpec } from '../../http/api-router';

const ErrorBody = z.object({
  error: z.object({
    code: z.enum([
      'validation_error',
      'invalid_json',
      'prompt_rules_disabled',
      'payments_not_configured',
      'secrets_not_configured',
      'limit_exceeded',
      'unknown_rule_version',
      'invalid_rule_set',
      'backtest_too_large',
      'backtest_running',
      'backtest_not_finished',
      'backtest_expired',
      'version_not_live',
      'retroaction_running',
      'unsupported_media_type',
      'payload_too_large',
      'unauthorized',
      'forbidden',
      'not_found',
      'method_not_allowed',
      'conflict',
      'report_not_decided',
      'report_actioned',
      'complaint_exists',
      'complaint_window_closed',
      'rate_limited',
      'unavailable',
      'timeout',
      'internal',
    ]),
    message: z.string(),
    details: z.unknown().optional(),
    requestId: z.string(),
  }),
});

const schemaOf = (schema: z.ZodType, io: 'input' | 'output') =>
  z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'openapi-3.0' });

/** `/records/:id` → `/records/{id}`. */
const openApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');

function queryParameters(schema: z.ZodType) {
  const json = schemaOf(schema, 'input') as { properties?: Record<string, unknown>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: 'query',
    required: json.required?.includes(name) ?? false,
    schema: property,
  }));
}

/** The OpenAPI 3 document, generated from the very schemas the routes validate with. */
export function buildOpenApi(specs: Array<RouteSpec & { fullPath: string }>, version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const errorResponse = {
    description: 'Error',
    content: { 'application/json': { schema: schemaOf(ErrorBody, 'output') } },
  };
  for (const spec of specs) {
    const path = openApiPath(spec.fullPath);
    const pathParams = [...spec.fullPath.matchAll(/:(\w+)/g)].map((match) => ({
      name: match[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    const operation: Record<string, unknown> = {
      summary: spec.summary,
      tags: [spec.tag],
      parameters: [...pathParams, ...(spec.query ? queryParameters(spec.query) : [])],
      responses: {
        [spec.status]: {
          description: 'Success',
          ...(spec.response || spec.alsoProduces
            ? {
                content: {
                  ...(spec.response ? { 'application/json': { schema: schemaOf(spec.response, 'output') } } : {}),
                  ...Object.fromEntries(
                    Object.entries(spec.alsoProduces ?? {}).map(([type, description]) => [
                      type,
                      { schema: { type: 'string', description } },
                    ]),
                  ),
                },
              }
            : {}),
        },
        ...Object.fromEntries(
          Object.entries(spec.errors ?? {}).map(([status, description]) => [status, { ...errorResponse, description }]),
        ),
        default: errorResponse,
      },
    };
    if (spec.body) {
      operation.requestBody = {
        required: true,
        content: { 'application/json': { schema: schemaOf(spec.body, 'input') } },
      };
    }
    if (spec.authenticated === false) operation.security = [];
    paths[path] = { ...paths[path], [spec.method]: operation };
  }
  return {
    openapi: '3.0.3',
    info: { title: 'Vigil content moderation API', version },
    components: { securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'API key `vgl_…`.' } } },
    security: [{ apiKey: [] }],
    paths,
  };
}
