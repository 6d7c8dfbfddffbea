# syntax=docker/dockerfile:1
# The Vigil services' images, one Dockerfile for the three: the build and runtime stages are the same but for the
# service's name, and each service adds its own files and ports in a stage of its own. Build from the repository root:
#   docker build --build-arg SERVICE=gateway -t vigil/gateway:0.1.0 .    (likewise moderator, notifier)
ARG NODE_IMAGE=node:20-bookworm-slim
# gateway, moderator or notifier; it also names the last stage, which the image is built from.
ARG SERVICE

FROM ${NODE_IMAGE} AS build
WORKDIR /app
# Manifests first: the dependency layer is reused while only sources change. npm needs every workspace's manifest
# to read the lockfile.
COPY package.json package-lock.json .npmrc ./
COPY proto/package.json proto/
COPY gateway/package.json gateway/
COPY moderator/package.json moderator/
COPY notifier/package.json notifier/
# `npm ci` installs exactly the locked tree (the lockfile records every platform's optional packages). No install
# scripts: the build needs only TypeScript.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.base.json tsconfig.json ./
COPY proto/ proto/
# The gRPC types are generated from the .proto files, not kept in the repository. Up to here, the three images'
# builds are the same steps, which a build cache runs once.
RUN npm run generate --workspace proto
ARG SERVICE
COPY ${SERVICE}/ ${SERVICE}/
RUN npx tsc -b ${SERVICE}
# Production dependencies of this service (and of the contracts package it links), nothing else. npm nests a
# dependency under a workspace when versions conflict: those folders are kept (created empty when unused).
RUN rm -rf node_modules */node_modules \
  && npm ci --omit=dev --workspace ${SERVICE} --no-audit --no-fund --ignore-scripts \
  && mkdir -p proto/node_modules ${SERVICE}/node_modules

FROM ${NODE_IMAGE} AS runtime
ARG SERVICE
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules/ node_modules/
COPY --from=build /app/proto/package.json proto/
COPY --from=build /app/proto/node_modules/ proto/node_modules/
COPY --from=build /app/proto/dist/ proto/dist/
# The gRPC contract is loaded from its .proto files at run time.
COPY --from=build /app/proto/vigil/ proto/vigil/
COPY --from=build /app/${SERVICE}/package.json ${SERVICE}/
COPY --from=build /app/${SERVICE}/node_modules/ ${SERVICE}/node_modules/
COPY --from=build /app/${SERVICE}/dist/ ${SERVICE}/dist/
# Any non-root uid works: the files are read-only to the process, and writes go to /tmp only.
USER 10001:10001
WORKDIR /app/${SERVICE}
# The flags of deploy/local/service-command.js.
CMD ["node", "--max-semi-space-size=4", "dist/main.js"]

FROM runtime AS gateway
# The console's stylesheet and script, served by the gateway.
COPY --from=build /app/gateway/assets/ /app/gateway/assets/
EXPOSE 8080 9090

FROM runtime AS moderator
# Run by the chart's pre-install/pre-upgrade Job: `node init-topics.js` creates the Kafka topics.
COPY deploy/images/init-topics.js /app/moderator/init-topics.js
EXPOSE 50051 9091

FROM runtime AS notifier
EXPOSE 9092

# The image: the stage of the service SERVICE names.
FROM ${SERVICE}
