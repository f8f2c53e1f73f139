/**
 * The browser bundle's stand-in for the `ws` package (browser/bundle.ts substitutes it):
 * the browser's own WebSocket, which stream.ts drives through the same WHATWG interface.
 */
export const WebSocket = globalThis.WebSocket;
