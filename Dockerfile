# syntax=docker/dockerfile:1
#
# Moreau, the multibody simulation server.
#   docker build -t moreau .
#   docker run --rm -p 8080:8080 moreau          # dashboard at http://localhost:8080/
# Configured through the environment variables of src/server/config.ts (PORT, HOST,
# WORKERS, MAX_SESSIONS, LOG_LEVEL, ...). docker/compose.yaml runs it with a healthcheck.
# test/docker/production.test.ts runs this file's build, install and start commands
# outside Docker.

# one pinned base image for every stage: an exact release of Node.js 26, the active LTS line
# (package.json `engines` gives every supported line; override with --build-arg NODE_IMAGE=...)
ARG NODE_IMAGE=node:26.12.1-slim

# ---- build: the server compiled to JavaScript and the dashboard's API client bundled for
# the browser from src/client (esbuild, `npm run build`: dist/main.js, dist/client.js)
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY routes ./routes
COPY schemas ./schemas
RUN npm run build

# ---- production dependencies only
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

# ---- runtime: node runs the compiled server (no run-time transpiling), as a non-root user
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json package-lock.json ./
# the dashboard's files and the example models, served by the server
COPY public ./public
COPY examples ./examples
# the `moreau` command line (bin/moreau.js runs src/cli with tsx, a production dependency)
COPY bin ./bin
COPY schemas ./schemas
COPY src ./src
# the files stay root-owned and read-only for the server; /data is the server's own, for
# session checkpoints when DATA_DIR=/data (docker/compose.yaml)
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM: checkpoint every session, answer requests still running at SHUTDOWN_TIMEOUT_MS
# with 503, exit 0 (docker/compose.yaml's stop grace period exceeds that timeout)
STOPSIGNAL SIGTERM
# the command of `npm start` (after its build), node itself as PID 1's child (init: true in
# compose) or PID 1: SIGTERM reaches the server
CMD ["node", "--enable-source-maps", "dist/main.js"]
