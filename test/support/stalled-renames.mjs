/**
 * Preloaded into a server process (`node --import` this file) to make its checkpoint store
 * slow on demand: while the file MOREAU_TEST_STALL names exists, every rename waits — and
 * a DATA_DIR checkpoint is confirmed only by the rename of its fsynced temporary file over
 * the session's file (persistence.ts), so the store holds the previous checkpoint until the
 * flag is removed, as a stuck disk or Redis would. A rename held writes the file `<flag>.held`:
 * the writes of a session being one at a time, every earlier one has then ended. Node's own
 * fs/promises is patched and its ESM exports re-synced, so the server's `import { rename }`
 * sees the patch.
 */
import { existsSync, writeFileSync } from "node:fs";
import fsp from "node:fs/promises";
import { syncBuiltinESMExports } from "node:module";

const flag = process.env.MOREAU_TEST_STALL;
if (flag) {
  const rename = fsp.rename;
  fsp.rename = async (from, to) => {
    if (existsSync(flag)) writeFileSync(`${flag}.held`, "");
    while (existsSync(flag)) await new Promise((r) => setTimeout(r, 10));
    return rename(from, to);
  };
  syncBuiltinESMExports();
}
