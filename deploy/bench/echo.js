'use strict';
// The bare baseline for `npm run bench -- moderate`: `node echo.js grpc` serves Echo over gRPC; `node echo.js http
// <grpc port>` serves POST /echo with Koa + koa-body and forwards the body through gRPC. Each logs its port as JSON.
const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const definition = protoLoader.loadSync(path.join(__dirname, 'echo.proto'), { keepCase: false, defaults: true });
const { Echo } = /** @type {any} */ (grpc.loadPackageDefinition(definition)).vigil.bench.v1;

function log(fields) {
  process.stdout.write(JSON.stringify(fields) + '\n');
}

if (process.argv[2] === 'grpc') {
  const server = new grpc.Server();
  server.addService(Echo.service, { echo: (call, callback) => callback(null, { payload: call.request.payload }) });
  server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => {
    if (err) throw err;
    log({ msg: 'grpc server listening', port });
  });
  process.on('SIGTERM', () => server.tryShutdown(() => process.exit(0)));
} else {
  const Koa = require('koa');
  const { koaBody } = require('koa-body');
  const client = new Echo(`127.0.0.1:${process.argv[3]}`, grpc.credentials.createInsecure());
  const app = new Koa();
  app.use(koaBody({ jsonLimit: '1mb' }));
  app.use(async (ctx) => {
    const reply = await new Promise((resolve, reject) =>
      client.echo(
        { payload: JSON.stringify(/** @type {{ body?: unknown }} */ (ctx.request).body) },
        { deadline: Date.now() + 5000 },
        (err, res) => (err ? reject(err) : resolve(res)),
      ),
    );
    ctx.body = { id: 'echo', status: 'Compliant', size: reply.payload.length };
  });
  const server = app.listen(0, '127.0.0.1', () =>
    log({ msg: 'http server listening', port: /** @type {import('node:net').AddressInfo} */ (server.address()).port }),
  );
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}
