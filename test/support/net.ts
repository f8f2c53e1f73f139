/** Loopback networking for tests and benchmarks that start a server process. */
import { type AddressInfo, createServer } from "node:net";

/** A TCP port free on 127.0.0.1 now (the OS picks it; it may be taken again later). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}
