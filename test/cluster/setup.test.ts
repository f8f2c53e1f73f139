/**
 * The Redis connections of a cluster node (src/server/cluster/setup.ts), on a redis-server
 * of this test's own: a lease renewal is never queued behind a checkpoint.
 *
 * Found in the cluster test: the node creating the 10 000-particle cloth went about 2 s
 * without its renewal answered, and its lease lapsed. The event loop was not the cause (its
 * longest delay while the cloth is created and checkpointed: 56 to 230 ms at load 10 on 2
 * cores); the renewal was sent on the connection carrying the cloth's 10 MB checkpoint, and
 * a connection answers in order, so the renewal waited for the whole checkpoint to be sent,
 * run through its fencing script and answered (renewal answered in 140 to 190 ms on an
 * idle Redis, against 12 ms on a connection of its own).
 *
 * Asserted by order, not by time: a renewal sent just after a 32 MB checkpoint write began
 * is answered before that write. On one shared connection it cannot be (answers come in
 * the order of the requests); on its own connection it is answered in a round trip while
 * the checkpoint is still streaming in.
 */
import { Socket } from "node:net";
import { Redis } from "ioredis";
import pino from "pino";
import { afterAll, beforeAll, expect, it } from "vitest";
import { redisPorts } from "../../src/server/cluster/setup";
import { resolveConfig } from "../../src/server/config";
import { checkpointBytes } from "../../src/server/persistence";
import { type RedisServer, startRedis } from "../support/redis";

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

it("a lease renewal sent while a 32 MB checkpoint is being written is answered before it", async () => {
  const config = resolveConfig({ redisUrl: redis.url });
  const { ports } = await redisPorts(config, pino({ level: "silent" }));
  try {
    expect(ports.healthy()).toBe(true);
    const lease = await ports.directory.claim("cloth", "node-a", 10_000);
    expect(lease).not.toBeNull();
    const held = lease as NonNullable<typeof lease>;
    // a session document's size for a cloth of ~30 000 particles
    const document = Buffer.alloc(32 * 1024 * 1024, 0x20);
    const order: string[] = [];
    const write = ports.snapshots
      .write("cloth", null, document, { epoch: held.epoch, run: null })
      .then(() => order.push("checkpoint"));
    // after the write's command went out (auto-pipelining sends on the next tick)
    await new Promise((res) => setImmediate(res));
    const renew = ports.directory.renew(held, 10_000).then((ok) => {
      order.push("renewal");
      return ok;
    });
    expect(await renew).toBe(true);
    await write;
    expect(order).toEqual(["renewal", "checkpoint"]);
    // the checkpoint landed whole, under the lease's epoch: a later write of that epoch passes
    await ports.snapshots.write("cloth", null, Buffer.from("{}"), { epoch: held.epoch, run: null });
  } finally {
    await ports.close();
  }
});

it("a checkpoint's document goes to the socket as it is, never copied, and is stored whole", async () => {
  // ioredis joins a command's arguments into one new Buffer and its auto-pipelining joins
  // again, on top of the checkpoint file's own concat: a 10 MB document cost 30 MB more in
  // the main process while it was sent. Now the very document is what the socket writes.
  const config = resolveConfig({ redisUrl: redis.url });
  const { ports } = await redisPorts(config, pino({ level: "silent" }));
  const written: Uint8Array[] = [];
  const write = Socket.prototype.write;
  const spy = function (this: Socket, chunk: unknown, ...rest: unknown[]) {
    if (chunk instanceof Uint8Array) written.push(chunk);
    return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
  };
  const reader = new Redis(redis.url);
  try {
    const lease = await ports.directory.claim("big", "node-a", 10_000);
    const epoch = (lease as NonNullable<typeof lease>).epoch;
    const document = Buffer.alloc(4 * 1024 * 1024, 0x20);
    Socket.prototype.write = spy as typeof write;
    try {
      await ports.snapshots.write("big", "key-1", document, { epoch, run: null });
    } finally {
      Socket.prototype.write = write;
    }
    // the document itself, not a copy holding it
    expect(written.filter((c) => c === document)).toHaveLength(1);
    expect(written.every((c) => c === document || c.byteLength < 1024)).toBe(true);
    const stored = await reader.hgetBuffer("moreau:snap:big", "doc");
    expect(stored?.equals(checkpointBytes("key-1", document))).toBe(true);
    // unfenced (a session outside a lease: epoch 0) the same
    written.length = 0;
    Socket.prototype.write = spy as typeof write;
    try {
      await ports.snapshots.write("big", null, document);
    } finally {
      Socket.prototype.write = write;
    }
    expect(written.filter((c) => c === document)).toHaveLength(1);
    const again = await reader.hgetBuffer("moreau:snap:big", "doc");
    expect(again?.equals(checkpointBytes(null, document))).toBe(true);
    // fenced off once another epoch holds it
    await expect(
      ports.snapshots.write("big", null, Buffer.from("{}"), { epoch: epoch + 1, run: null }),
    ).rejects.toThrow();
  } finally {
    reader.disconnect();
    await ports.close();
  }
});

it("a lease renewal sent while a 32 MB frame is being published is answered before it", async () => {
  // frames go on the command connection (the bus): renewals have a connection of their own
  const config = resolveConfig({ redisUrl: redis.url });
  const { ports } = await redisPorts(config, pino({ level: "silent" }));
  try {
    const leases = ports.leases as NonNullable<typeof ports.leases>;
    const lease = await leases.claim("cloth-frames", "node-a", 10_000);
    const held = lease as NonNullable<typeof lease>;
    const order: string[] = [];
    const publish = ports.bus
      .publish("cloth-frames", "1|bodies|json", held.epoch, {
        step: 1,
        forced: true,
        bytes: Buffer.alloc(32 * 1024 * 1024, 0x20),
      })
      .then((seq) => {
        order.push("frame");
        return seq;
      });
    await new Promise((res) => setImmediate(res));
    const renew = leases.renew(held, 10_000).then((ok) => {
      order.push("renewal");
      return ok;
    });
    expect(await renew).toBe(true);
    expect(await publish).toBe(1);
    expect(order).toEqual(["renewal", "frame"]);
  } finally {
    await ports.close();
  }
});
