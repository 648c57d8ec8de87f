/**
 * Loopback addresses: what the local stack's servers answer to, and the only base URL sdapi takes from a folder's
 * `.local/stack.json` or sends a token to over plain http.
 */

/** `URL.hostname` of this machine's loopback: `localhost`, `127.0.0.0/8`, `[::1]` (WHATWG keeps IPv6 brackets). */
export function isLoopbackHostname(hostname: string): boolean {
  const name = hostname.toLowerCase();
  return name === 'localhost' || name === '[::1]' || /^127(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/.test(name);
}

/**
 * A `Host` header naming this machine's loopback, with or without a port. A page on another name that resolves to
 * 127.0.0.1 (DNS rebinding) sends its own name here, so refusing it keeps a web page from driving a local server.
 */
export function isLoopbackHostHeader(host: string | undefined): boolean {
  if (host === undefined) return false;
  const match = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::(\d{1,5}))?$/i.exec(host.trim());
  if (!match) return false;
  const port = match[2];
  return isLoopbackHostname(match[1] ?? '') && (port === undefined || Number(port) <= 65535);
}
