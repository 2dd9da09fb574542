// Reading a `WWW-Authenticate` field (RFC 9110 §11.6.1) as a client does: its challenges, each a scheme with its
// auth-params. One pass over the text, for whatever a server sends; what does not parse is left out, never guessed.

/** One challenge: its scheme (lower case) and its auth-params (names lower case, values unquoted). */
export interface Challenge {
  readonly scheme: string;
  readonly params: ReadonlyMap<string, string>;
}

// RFC 9110 §5.6.2: token characters.
const TCHAR = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]$/;

/** The field split at the commas that are outside quoted strings (RFC 9110 §5.6.1, §5.6.4), each part trimmed. */
function listMembers(field: string): string[] {
  const members: string[] = [];
  let start = 0;
  let quoted = false;
  for (let at = 0; at < field.length; at += 1) {
    const char = field[at];
    if (quoted) {
      if (char === '\\') at += 1;
      else if (char === '"') quoted = false;
    } else if (char === '"') {
      quoted = true;
    } else if (char === ',') {
      members.push(field.slice(start, at).trim());
      start = at + 1;
    }
  }
  members.push(field.slice(start).trim());
  return members.filter((member) => member !== '');
}

/** The token at the start of `text`, and where it ends. */
function leadingToken(text: string): string {
  let end = 0;
  while (end < text.length && TCHAR.test(text[end])) end += 1;
  return text.slice(0, end);
}

/** A token or a quoted-string value, unquoted (RFC 9110 §5.6.4); undefined when it is neither, whole. */
function paramValue(text: string): string | undefined {
  if (!text.startsWith('"')) {
    const token = leadingToken(text);
    return token !== '' && token.length === text.length ? token : undefined;
  }
  let value = '';
  for (let at = 1; at < text.length; at += 1) {
    const char = text[at];
    if (char === '"') return at === text.length - 1 ? value : undefined;
    if (char === '\\') at += 1;
    value += text[at] ?? '';
  }
  return undefined;
}

/** `name = value` (RFC 9110 §11.2: whitespace allowed around `=`), or undefined when `member` is not one. */
function authParam(member: string): [string, string] | undefined {
  const name = leadingToken(member);
  const rest = member.slice(name.length).trimStart();
  if (name === '' || !rest.startsWith('=')) return undefined;
  const value = paramValue(rest.slice(1).trimStart());
  return value === undefined ? undefined : [name.toLowerCase(), value];
}

/**
 * The challenges of a `WWW-Authenticate` field value (several fields joined with commas read the same). A member
 * `scheme`, `scheme token68` or `scheme name=value` opens a challenge; a member `name=value` adds to the one open.
 * A parameter named twice keeps its first value (RFC 9110 §11.2 allows each name once).
 */
export function parseChallenges(field: string): Challenge[] {
  const challenges: Array<{ scheme: string; params: Map<string, string> }> = [];
  for (const member of listMembers(field)) {
    const param = authParam(member);
    const open = challenges[challenges.length - 1];
    if (param !== undefined) {
      if (open !== undefined && !open.params.has(param[0])) open.params.set(param[0], param[1]);
      continue;
    }
    const scheme = leadingToken(member);
    if (scheme === '' || (scheme.length < member.length && !/[ \t]/.test(member[scheme.length]))) continue;
    const params = new Map<string, string>();
    const first = authParam(member.slice(scheme.length).trimStart());
    if (first !== undefined) params.set(first[0], first[1]);
    challenges.push({ scheme: scheme.toLowerCase(), params });
  }
  return challenges;
}
