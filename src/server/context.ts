/**
 * What the route plugins (routes/) get from the app: `app.moreau`. Routes know sessions,
 * streams and metrics, never the engine.
 */
import type { ClusterNode } from "./cluster/node";
import type { Config } from "./config";
import type { ServerMetrics } from "./metrics";
import type { SessionManager } from "./session-manager";

export interface MoreauContext {
  readonly config: Config;
  readonly sessions: SessionManager;
  readonly metrics: ServerMetrics;
  /** the cluster node (REDIS_URL), or null: a single server */
  readonly cluster: ClusterNode | null;
  /** process.uptime() at build time, for /health */
  readonly startedAt: number;
}

declare module "fastify" {
  interface FastifyInstance {
    moreau: MoreauContext;
  }
  interface FastifyContextConfig {
    /**
     * The JSON body reaches the handler unparsed (a JsonText, src/server/request-body.ts),
     * to be parsed and validated in a worker; its size limit is MAX_MODEL_BYTES.
     */
    bodyInWorker?: boolean;
  }
}
