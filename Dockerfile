# syntax=docker/dockerfile:1
#
# Moreau, the multibody simulation server.
#   docker build -t moreau .
#   docker run --rm -p 8080:8080 moreau          # dashboard at http://localhost:8080/
# Configured through the environment variables of src/server/config.ts (PORT, HOST,
# WORKERS, MAX_SESSIONS, LOG_LEVEL, ...). docker/compose.yaml runs it with a healthcheck.
# test/docker/production.test.ts runs this file's install and start commands outside Docker.

ARG NODE_VERSION=20

# ---- production dependencies only (tsx, the TypeScript runner, is one of them)
FROM node:${NODE_VERSION}-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

# ---- runtime: the sources run as they are (no build step), as a non-root user
FROM node:${NODE_VERSION}-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json tsconfig.json ./
COPY bin ./bin
COPY schemas ./schemas
COPY src ./src
COPY routes ./routes
COPY public ./public
COPY examples ./examples
# the files stay root-owned and read-only for the server; tsx caches in /tmp; /data is
# the server's own, for session checkpoints when DATA_DIR=/data (docker/compose.yaml)
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
# the command of `npm start` (tsx src/server/main.ts) without npm in between: SIGTERM
# reaches tsx, which passes it to the server for its graceful shutdown
CMD ["node_modules/.bin/tsx", "src/server/main.ts"]
