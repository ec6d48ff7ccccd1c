# syntax=docker/dockerfile:1
# One image recipe for every app: `docker build --build-arg APP=<privacy-api|refsync-api|refsync-importer> .`
# Stages: full install + bundle (esbuild inlines the workspace libs), production-only install,
# and a slim runtime that runs as the unprivileged `node` user.
#
# The Node release is the one every test, CI run, benchmark and `npm start` runs under: the `node`
# devDependency in package.json and `.nvmrc` name the same version, and
# tools/image-check (run by CI) fails when the three disagree.
ARG NODE_IMAGE=node:24.21.0-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /repo
# patches/ must be here before `npm ci`: its postinstall (`patch-package --error-on-fail`) applies
# them, and fails the build when one does not apply. Without the folder it would find nothing to
# apply and succeed, shipping the unpatched dependency.
COPY package.json package-lock.json ./
COPY patches ./patches
RUN npm ci --no-audit --no-fund
COPY . .
ARG APP
RUN test -n "$APP" && npx nx run "$APP:build" --skip-nx-cache

FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /repo
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM ${NODE_IMAGE} AS runtime
ARG APP
ENV NODE_ENV=production
WORKDIR /app
COPY --from=prod-deps /repo/node_modules ./node_modules
# The production install runs no scripts, so it lacks the patches in patches/ (README there): take
# each patched package from the build stage, whose `npm ci` applied them. tools/image-check (CI)
# compares every package the runtime gets with the tested install, so a patched package missing
# here fails CI.
COPY --from=build /repo/node_modules/mongodb ./node_modules/mongodb
COPY --from=build /repo/dist/apps/${APP}/ ./
# Sample upstream data for trying the importer: docker compose points REFSYNC_SOURCE_* here. The
# importer has no default source; a deployment must set both variables (it refuses to start).
COPY tools/refsync-sample-data/data ./sample-data
USER node
# node is not a good PID 1 by itself: compose sets `init: true` so signals reach it and zombies
# are reaped; the app handles SIGTERM with a graceful shutdown.
CMD ["node", "--enable-source-maps", "main.js"]
