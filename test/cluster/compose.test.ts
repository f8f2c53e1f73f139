/**
 * docker/compose.cluster.yaml and its proxy's configuration, read as files (this machine
 * has no Docker engine): Redis and three Moreau nodes with health checks, each node its
 * own NODE_ID and NODE_URL on the one REDIS_URL, and an nginx in front whose upstream is
 * exactly those nodes, with WebSocket upgrades passed through.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { ENV_VARS } from "../../src/server/config";
import { ROOT } from "../support/process";

interface Service {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
  ports?: string[];
  volumes?: string[];
}

const compose = parseYaml(readFileSync(join(ROOT, "docker/compose.cluster.yaml"), "utf8"), {
  merge: true,
}) as { services: Record<string, Service> };
const nginx = readFileSync(join(ROOT, "docker/nginx.cluster.conf"), "utf8");
const nodes = ["moreau-1", "moreau-2", "moreau-3"];

describe("docker/compose.cluster.yaml", () => {
  it("runs Redis and three nodes, each with its own name and address on the one Redis", () => {
    const { services } = compose;
    expect(Object.keys(services).sort()).toEqual([
      "moreau-1",
      "moreau-2",
      "moreau-3",
      "proxy",
      "redis",
    ]);
    expect(services.redis.healthcheck?.test.join(" ")).toContain("redis-cli ping");
    for (const n of nodes) {
      const env = services[n].environment ?? {};
      expect(env.REDIS_URL).toBe("redis://redis:6379");
      expect(env.NODE_ID).toBe(n);
      expect(env.NODE_URL).toBe(`http://${n}:8080`);
      expect(env.HOST).toBe("0.0.0.0");
      // every variable it sets is one the server reads
      for (const k of Object.keys(env))
        expect([...Object.values(ENV_VARS), "API_KEYS"]).toContain(k);
      expect(services[n].healthcheck?.test.join(" ")).toContain("http://127.0.0.1:8080/ready");
      expect(services[n].depends_on?.redis.condition).toBe("service_healthy");
    }
  });

  it("puts a plain nginx in front of exactly those nodes, WebSockets passed through", () => {
    const proxy = compose.services.proxy;
    expect(proxy.image).toMatch(/^nginx:/);
    // a compose variable reference, written as compose reads it
    expect(proxy.ports).toEqual([`${"$"}{MOREAU_PORT:-8080}:8080`]);
    expect(proxy.volumes).toEqual(["./nginx.cluster.conf:/etc/nginx/nginx.conf:ro"]);
    for (const n of nodes) expect(proxy.depends_on?.[n].condition).toBe("service_healthy");
    const upstream = /upstream moreau \{([^}]*)\}/.exec(nginx)?.[1] ?? "";
    expect([...upstream.matchAll(/server ([\w-]+):8080/g)].map((m) => m[1])).toEqual(nodes);
    expect(nginx).toContain("proxy_set_header Upgrade $http_upgrade;");
    expect(nginx).toContain("proxy_set_header Connection $connection_upgrade;");
  });
});
