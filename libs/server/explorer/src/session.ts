/**
 * What the explorer remembers between page loads: the request headers and who signed in. Kept
 * per origin by the browser's Web Storage: `sessionStorage` (this tab, until it closes) unless
 * the user ticks "remember on this device" (`localStorage`). Storage that throws (disabled,
 * full, a sandboxed frame) only means nothing is remembered.
 */
import type { SignInInfo } from './openrpc-view.js';

export interface ExplorerSession {
  /** The headers box: one `Name: value` per line. */
  headers: string;
  /** Set by "use this token": which header the sign-in wrote and whom it names. */
  signedIn?: { header: string; label: string; method: string };
}

const KEY = 'nest-jsonrpc-explorer/session';

function storage(kind: 'local' | 'session'): Storage | undefined {
  try {
    return kind === 'local' ? window.localStorage : window.sessionStorage;
  } catch {
    return undefined;
  }
}

function read(kind: 'local' | 'session'): ExplorerSession | undefined {
  try {
    const text = storage(kind)?.getItem(KEY);
    if (!text) return undefined;
    const value = JSON.parse(text) as ExplorerSession;
    return typeof value?.headers === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The remembered session; `remember` tells where it came from (localStorage). */
export function loadSession(): { session: ExplorerSession; remember: boolean } {
  const kept = read('local');
  if (kept) return { session: kept, remember: true };
  return { session: read('session') ?? { headers: '' }, remember: false };
}

/** Writes the session where `remember` says, and removes it from the other storage. */
export function saveSession(session: ExplorerSession, remember: boolean): void {
  const [target, other] = remember ? (['local', 'session'] as const) : (['session', 'local'] as const);
  try {
    storage(other)?.removeItem(KEY);
    if (session.headers === '' && !session.signedIn) storage(target)?.removeItem(KEY);
    else storage(target)?.setItem(KEY, JSON.stringify(session));
  } catch {
    // nothing remembered: the page still works with what is on screen
  }
}

/** `Name: value` lines with the line(s) for `name` (any case) replaced by one, or removed (`value` undefined). */
export function withHeaderLine(text: string, name: string, value: string | undefined): string {
  const lower = name.toLowerCase();
  const kept = text.split('\n').filter((line) => line.trim() !== '' && line.slice(0, line.indexOf(':')).trim().toLowerCase() !== lower);
  if (value !== undefined) kept.push(`${name}: ${value}`);
  return kept.join('\n');
}

/** The token in a sign-in method's result, at its dot-separated `tokenPath`. */
export function tokenAt(result: unknown, tokenPath: string): string | undefined {
  let value: unknown = result;
  for (const key of tokenPath.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return typeof value === 'string' && value !== '' ? value : typeof value === 'number' ? String(value) : undefined;
}

/** The header value a sign-in sends: `<scheme> <token>`, or the token alone when the scheme is empty. */
export function signInHeaderValue(signIn: SignInInfo, token: string): string {
  return signIn.scheme ? `${signIn.scheme} ${token}` : token;
}

const USER_PARAMS = ['username', 'user', 'login', 'email', 'name'];
const USER_CLAIMS = ['preferred_username', 'name', 'email', 'sub'];

/**
 * Whom "signed in as" names: a JWT's `preferred_username`/`name`/`email`/`sub` claim, else the
 * login call's `username`/`user`/`login`/`email`/`name` param, else the token's last characters.
 */
export function signInLabel(token: string, params: unknown): string {
  const claims = jwtClaims(token);
  for (const claim of USER_CLAIMS) if (typeof claims?.[claim] === 'string' && claims[claim]) return claims[claim] as string;
  if (params !== null && typeof params === 'object' && !Array.isArray(params)) {
    for (const name of USER_PARAMS) {
      const value = (params as Record<string, unknown>)[name];
      if (typeof value === 'string' && value !== '') return value;
    }
  }
  return `token …${token.slice(-4)}`;
}

function jwtClaims(token: string): Record<string, unknown> | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const json = atob(parts[1].replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(parts[1].length / 4) * 4, '='));
    const claims = JSON.parse(new TextDecoder().decode(Uint8Array.from(json, (c) => c.charCodeAt(0))));
    return claims !== null && typeof claims === 'object' ? claims : undefined;
  } catch {
    return undefined;
  }
}
