/**
 * Nodes a and b of one cluster in this process, over the in-process adapters (a
 * MemoryCluster shared by their ports: src/server/cluster/memory.ts), listening on
 * 127.0.0.1, each with one worker and a lease TTL of 3 s unless `config` says otherwise;
 * `ports` replaces a node's adapters (a directory or a store whose calls a test holds). They
 * are kept in `apps`, which the caller closes after its tests; resolved once both
 * heartbeats are published. memoryNode makes one more.
 */
import type { AddressInfo } from "node:net";
import { buildApp, type MoreauApp } from "../../src/server/app";
import {
  MemoryBus,
  type MemoryCluster,
  MemoryDirectory,
  MemorySnapshotStore,
} from "../../src/server/cluster/memory";
import type { ClusterPorts } from "../../src/server/cluster/node";
import type { ConfigInput } from "../../src/server/config";
import { waitFor } from "./wait";

export interface MemoryNode {
  app: MoreauApp;
  /** http://127.0.0.1:<port> */
  url: string;
}

export async function memoryNodes(
  c: MemoryCluster,
  apps: MoreauApp[],
  config: ConfigInput = {},
  ports: (id: "a" | "b") => Partial<ClusterPorts> = () => ({}),
): Promise<[MemoryNode, MemoryNode]> {
  const a = await memoryNode(c, apps, "a", config, ports("a"));
  const b = await memoryNode(c, apps, "b", config, ports("b"));
  await waitFor(async () => (await new MemoryDirectory(c).nodes()).length === 2, 5000);
  return [a, b];
}

/**
 * One node `id` of cluster `c`, as memoryNodes makes them (kept in `apps`); resolved once it
 * listens, before its heartbeat is published.
 */
export async function memoryNode(
  c: MemoryCluster,
  apps: MoreauApp[],
  id: string,
  config: ConfigInput = {},
  ports: Partial<ClusterPorts> = {},
): Promise<MemoryNode> {
  const app = await buildApp(
    { workers: 1, logLevel: "silent", nodeId: id, leaseTtlMs: 3000, ...config },
    {
      cluster: {
        directory: new MemoryDirectory(c),
        bus: new MemoryBus(c),
        snapshots: new MemorySnapshotStore(c),
        healthy: () => true,
        close: async () => undefined,
        ...ports,
      },
    },
  );
  await app.listen({ port: 0, host: "127.0.0.1" });
  apps.push(app);
  return { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
}
