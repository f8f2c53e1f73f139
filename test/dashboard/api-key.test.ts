/**
 * The dashboard against a server with access control, in headless Chromium: the page and
 * its assets load without a key; the first API call answers 401 and the page asks for a
 * key; a wrong key is refused (asked again), the right one lists the sessions, creates
 * one from an example and streams it (the browser's WebSocket carries the key as the
 * subprotocol bearer.<base64url(key)>); the session belongs to that key.
 */
import { describe, expect, it } from "vitest";
import { keyId } from "../../src/server/auth";
import { useDashboard } from "./browser";

const KEY = "dashboard-key-0123456789";
const h = useDashboard({ apiKeys: [KEY] });

describe("dashboard with API keys", () => {
  it("asks for the key, then lists, creates and streams with it", async () => {
    const { page } = h;
    await h.open();
    expect(await page.locator("#example-select option").count()).toBeGreaterThan(1);
    await page.waitForSelector("#key-form:not([hidden])");
    expect(await page.textContent("#message")).toMatch(/401 unauthorized/);

    await page.fill("#api-key", "not-the-key");
    await page.click("#key-btn");
    await page.waitForFunction(() =>
      /unknown API key/.test(document.getElementById("message")?.textContent ?? ""),
    );
    await page.waitForSelector("#key-form:not([hidden])");

    await page.fill("#api-key", KEY);
    await page.click("#key-btn");
    await page.waitForFunction(() =>
      /API key set/.test(document.getElementById("message")?.textContent ?? ""),
    );
    expect(await page.isHidden("#key-form")).toBe(true);

    const id = await h.createFromExample("bouncing-ball");
    await page.click("#run-btn");
    await h.waitDash("d.state.statesReceived >= 10");
    expect(h.app.moreau.sessions.exists(id, keyId(KEY))).toBe(true);
    expect(h.app.moreau.sessions.exists(id, keyId("someone-else"))).toBe(false);
    await page.click("#pause-btn");
    expect(h.pageErrors).toEqual([]);
  });
});
