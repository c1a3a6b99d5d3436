import { BlockList, isIP } from 'node:net';
import { ClusterError } from '../../../domain/common/port-errors.js';

/**
 * The HTTP proxy to reach `server` through, or `null` to connect directly. The cluster's
 * `proxy-url` applies to every request when set. Otherwise the environment decides, by Go's
 * rules (what kubectl and the kubelet do): HTTPS_PROXY (or https_proxy) for an https server,
 * HTTP_PROXY (or http_proxy) for an http one, none for a host NO_PROXY (or no_proxy) matches,
 * and never for localhost or a loopback address.
 */
export function proxyFor(server: URL, proxyUrl: string | undefined, env: NodeJS.ProcessEnv): URL | null {
  if (proxyUrl !== undefined) return parseProxy(proxyUrl, 'the kubeconfig proxy-url');
  const secure = server.protocol === 'https:';
  const variable = secure ? ['HTTPS_PROXY', 'https_proxy'] : ['HTTP_PROXY', 'http_proxy'];
  const name = variable.find((key) => (env[key] ?? '') !== '');
  if (name === undefined) return null;
  const host = unbracket(server.hostname).toLowerCase();
  if (host === 'localhost' || isLoopback(host)) return null;
  const port = server.port === '' ? (secure ? '443' : '80') : server.port;
  const noProxy = env['NO_PROXY'] ?? env['no_proxy'] ?? '';
  if (noProxyMatches(noProxy, host, port)) return null;
  return parseProxy(env[name] ?? '', name);
}

/**
 * Whether NO_PROXY exempts `host:port`: `*` exempts everything; each comma-separated entry is an
 * IP address, a CIDR range, or a domain (`example.com` matches it and its subdomains,
 * `.example.com` and `*.example.com` only its subdomains), optionally with `:port`.
 */
export function noProxyMatches(noProxy: string, host: string, port: string): boolean {
  for (const raw of noProxy.split(',')) {
    const entry = raw.trim().toLowerCase();
    if (entry === '') continue;
    if (entry === '*') return true;
    if (entry.includes('/')) {
      if (cidrContains(entry, host)) return true;
      continue;
    }
    const [entryHost, entryPort] = splitHostPort(entry);
    if (entryPort !== null && entryPort !== port) continue;
    const family = isIP(entryHost);
    if (family !== 0) {
      if (cidrContains(`${entryHost}/${family === 4 ? 32 : 128}`, host)) return true;
      continue;
    }
    const domain = entryHost.startsWith('*.') ? entryHost.slice(1) : entryHost;
    if (domain.startsWith('.') ? host.endsWith(domain) : host === domain || host.endsWith(`.${domain}`)) return true;
  }
  return false;
}

function parseProxy(value: string, source: string): URL {
  // Go takes a proxy without a scheme to be an http one.
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new ClusterError(null, `${source} is not a URL`);
  }
  if (url.protocol !== 'http:' || url.hostname === '')
    throw new ClusterError(
      null,
      `${source} must be an http:// proxy (HTTP CONNECT); ${url.protocol}// is not supported`,
    );
  return url;
}

function splitHostPort(entry: string): [string, string | null] {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (bracketed !== null) return [bracketed[1] ?? '', bracketed[2] ?? null];
  if (isIP(entry) === 6) return [entry, null];
  const colon = entry.lastIndexOf(':');
  return colon < 0 ? [entry, null] : [entry.slice(0, colon), entry.slice(colon + 1)];
}

function cidrContains(cidr: string, host: string): boolean {
  const family = isIP(host);
  const [network = '', bits = ''] = cidr.split('/');
  const networkFamily = isIP(network);
  if (family === 0 || networkFamily !== family || !/^\d+$/.test(bits)) return false;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  const list = new BlockList();
  try {
    list.addSubnet(network, Number(bits), type);
  } catch {
    return false;
  }
  return list.check(host, type);
}

function isLoopback(host: string): boolean {
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return cidrContains('::1/128', host) || cidrContains('::ffff:127.0.0.0/104', host);
  return false;
}

function unbracket(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}
