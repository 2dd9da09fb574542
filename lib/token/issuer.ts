// Which `iss` a TokenAuth accepts: exact issuers, and issuer templates whose `{tenantid}` each token fills in with
// its own `tid` (Entra ID's multi-tenant form, docs/enterprise.md), allowed by the `tenants` rule. One rule as data.
import { TokenAuthError } from '../base/errors';
import { optionError } from '../base/option-error';
import { quoted, quotedList } from '../base/printable';

/** The placeholder an issuer template carries where each token's tenant goes (Entra ID writes it so). */
export const TENANT_PLACEHOLDER = '{tenantid}';

/** A tenant ID as a token's `tid` must carry it: a GUID in lower case. */
const TENANT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** A GUID in any case: printed in a hint (a GUID says nothing of the token); anything else is not. */
const GUID_ANY_CASE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `tenants`: the tenant IDs accepted under an issuer template, a predicate on `tid`, or `'any'` on purpose. */
export type TenantsOption = readonly string[] | ((tid: string) => boolean) | 'any';

/** The `tenants` option once read: which tenant IDs (lower-case GUIDs) are allowed. */
export type TenantRule = (tid: string) => boolean;

/** Whether an issuer is a template (holds `{tenantid}`). */
export function isIssuerTemplate(issuer: string): boolean {
  return issuer.includes(TENANT_PLACEHOLDER);
}

/** Whether a value is a tenant ID as tokens carry it: a lower-case GUID. */
export function isTenantId(value: unknown): value is string {
  return typeof value === 'string' && TENANT_ID.test(value);
}

/**
 * Read `tenants` (an OptionError naming it for anything wrong): a non-empty array of GUIDs (any case; compared in
 * lower case), a function, or `'any'`. Undefined when absent.
 */
export function resolveTenants(value: unknown): TenantRule | undefined {
  if (value === undefined) return undefined;
  if (value === 'any') return () => true;
  if (typeof value === 'function') {
    const allows = value as (tid: string) => unknown;
    // Only `true` allows; a throw refuses the tenant, like any other answer.
    return (tid) => {
      try {
        return allows(tid) === true;
      } catch {
        return false;
      }
    };
  }
  if (!Array.isArray(value) || value.length === 0)
    optionError('tenants', `option "tenants" must be a non-empty array of tenant IDs (GUIDs), a function, or 'any'`);
  const allowed = new Set<string>();
  value.forEach((tid: unknown, index) => {
    if (typeof tid !== 'string' || !GUID_ANY_CASE.test(tid))
      optionError(`tenants[${index}]`, `option "tenants[${index}]" must be a tenant ID (a GUID)`);
    allowed.add(tid.toLowerCase());
  });
  return (tid) => allowed.has(tid);
}

/**
 * Check one issuer of the options: a template holds `{tenantid}` exactly once and no other `{…}` (a misspelt
 * placeholder would otherwise be compared as text and match nothing).
 */
export function checkIssuerTemplate(issuer: string, option: string): void {
  const braces = issuer.match(/\{[^}]*\}?/g) ?? [];
  if (braces.length === 0) return;
  if (braces.length > 1 || braces[0] !== TENANT_PLACEHOLDER)
    optionError(option, `option "${option}" may hold "${TENANT_PLACEHOLDER}" once, and no other placeholder`);
}

/**
 * The `tenants` option against the issuers it would apply to: a template without `tenants` accepts no token, and
 * `tenants` without a template applies to nothing; both are refused (an OptionError naming `tenants`).
 */
export function checkTenantsFit(issuers: readonly string[], tenants: TenantRule | undefined, source: string): void {
  const template = issuers.find(isIssuerTemplate);
  if (template !== undefined && tenants === undefined)
    optionError(
      'tenants',
      `${source} is the issuer template ${JSON.stringify(template)}: option "tenants" must say which tenants to accept (tenant IDs, a function, or 'any' on purpose)`,
    );
  if (template === undefined && tenants !== undefined)
    optionError('tenants', `option "tenants" applies only to an issuer template (one holding "${TENANT_PLACEHOLDER}")`);
}

/**
 * The accepted values, quoted and escaped (discovered issuers are a server's text), for a hint: `"a"`, `"a" or
 * "b"`, `"a", "b" or "c"`.
 */
export function acceptedList(values: Iterable<string>): string {
  return quotedList([...values], 'or', Infinity);
}

/** An `iss` refusal whose hint names the issuers that would have been accepted (for logs, never the client). */
export function issuerRefused(accepted: Iterable<string>, source = 'option "issuer"', more?: string): TokenAuthError {
  const hint = `expected iss ${acceptedList(accepted)}, from ${source}${more === undefined ? '' : `; ${more}`}`;
  return new TokenAuthError('invalid_token', { reason: 'iss', hint });
}

/** The placeholder as a key's `issuer` may write it: in any case, as Microsoft's own check of that member reads it. */
const KEY_PLACEHOLDER = /\{tenantid\}/gi;

/**
 * The issuers a key set serves: the `issuer` option's, or its server's discovered `issuer`. Asked only when a key
 * bound to an issuer meets a token whose `iss` is not that issuer.
 */
export type ServedIssuers = () => readonly string[];

/** A key's own issuer rule: true when the token fits it, given the issuers the key's set serves (if any). */
export type KeyIssuerRule = (payload: Readonly<Record<string, unknown>>, served: ServedIssuers | undefined) => boolean;

/**
 * The rule of a key bound to one issuer (the `issuer` member of an Entra ID JWK, docs/enterprise.md): `{tenantid}`
 * in it is filled from the token's `tid`, which must then be a tenant ID (a lower-case GUID). The token fits when
 * its `iss` is that issuer, or, as Microsoft's own check allows (a v1.0 token signed with a v2.0 key), when its
 * `tid` is a tenant ID that both its `iss` and the filled-in key issuer contain, and the key issuer is one the set
 * serves, filled in alike. Worked out once per key; whatever `tenants` allows is the issuer rule's to say.
 */
export function keyIssuerRule(issuer: string): KeyIssuerRule {
  const parts = issuer.split(KEY_PLACEHOLDER);
  if (parts.length === 1)
    return (payload, served) => payload.iss === issuer || servesKeyIssuer(issuer, payload, served);
  return (payload, served) => {
    if (!isTenantId(payload.tid)) return false;
    const effective = parts.join(payload.tid);
    return payload.iss === effective || servesKeyIssuer(effective, payload, served);
  };
}

/**
 * Whether a key's (filled-in) issuer is one the set serves, for a token whose `iss` contains its own tenant ID. The
 * key's issuer must name that tenant too: with an exact issuer of another tenant accepted beside a template, that
 * tenant's key would otherwise verify every tenant's tokens.
 */
function servesKeyIssuer(
  keyIssuer: string,
  payload: Readonly<Record<string, unknown>>,
  served: ServedIssuers | undefined,
): boolean {
  const { iss, tid } = payload;
  if (served === undefined || !isTenantId(tid) || typeof iss !== 'string') return false;
  if (!iss.includes(tid) || !keyIssuer.includes(tid)) return false;
  return served().some((issuer) => issuer.split(KEY_PLACEHOLDER).join(tid) === keyIssuer);
}

/** Which issuers a TokenAuth (or one discovered server) accepts, asked before and after a token's signature. */
export interface IssuerRule {
  /** The issuers as configured or discovered, templates with `{tenantid}` in them. */
  readonly issuers: readonly string[];
  /**
   * Whether `iss` has the form of one of the issuers (itself, or a template with one path segment in place of
   * `{tenantid}`): for routing a token to its server before anything is fetched. Nothing is accepted by this.
   */
  names(iss: string): boolean;
  /**
   * Throws `invalid_token` unless the payload's `iss` is accepted: reason `iss` (no issuer of this form), `tid`
   * (a template, and `tid` absent or not a lower-case GUID), `iss-tenant` (the tenant in `iss` is not `tid`, or
   * `tenants` does not allow it). The hint names the tenant seen when it is a GUID, nothing else of the token.
   */
  check(payload: Readonly<Record<string, unknown>>): void;
}

interface Template {
  readonly issuer: string;
  readonly prefix: string;
  readonly suffix: string;
}

function templateOf(issuer: string): Template {
  const at = issuer.indexOf(TENANT_PLACEHOLDER);
  return { issuer, prefix: issuer.slice(0, at), suffix: issuer.slice(at + TENANT_PLACEHOLDER.length) };
}

/** Whether `iss` is the template with one non-empty segment (no `/`) in place of `{tenantid}`. */
function frames(template: Template, iss: string): boolean {
  const { prefix, suffix } = template;
  if (iss.length <= prefix.length + suffix.length || !iss.startsWith(prefix) || !iss.endsWith(suffix)) return false;
  return !iss.slice(prefix.length, iss.length - suffix.length).includes('/');
}

/**
 * The segment `value` has in place of `{tenantid}` when it is `template` with one non-empty segment (no `/`) there;
 * undefined otherwise, and for an exact issuer.
 */
export function templateSegment(template: string, value: string): string | undefined {
  if (!isIssuerTemplate(template)) return undefined;
  const framed = templateOf(template);
  return frames(framed, value) ? value.slice(framed.prefix.length, value.length - framed.suffix.length) : undefined;
}

function tenantRefused(reason: 'tid' | 'iss-tenant', hint: string): TokenAuthError {
  return new TokenAuthError('invalid_token', { reason, hint });
}

/** What a hint may say of a value from the token: a GUID as it is, anything else only that it is not one. */
function seen(value: unknown): string {
  return typeof value === 'string' && GUID_ANY_CASE.test(value) ? value : 'no tenant ID';
}

/** A token under a template: `tid` a lower-case GUID, the one `iss` carries, and allowed by `tenants`. */
function checkTenant(template: Template, iss: string, tid: unknown, tenants: TenantRule | undefined): void {
  const expected = `expected iss ${quoted(template.issuer, Infinity)} with the token's tid in place of ${TENANT_PLACEHOLDER}`;
  if (tid === undefined) throw tenantRefused('tid', `the token has no tid claim; ${expected}`);
  if (!isTenantId(tid)) {
    const what =
      typeof tid === 'string' && GUID_ANY_CASE.test(tid)
        ? `tid ${tid} is not in lower case`
        : 'tid is not a tenant ID (a GUID)';
    throw tenantRefused('tid', `${what}; ${expected}`);
  }
  if (iss !== `${template.prefix}${tid}${template.suffix}`) {
    const named = seen(iss.slice(template.prefix.length, iss.length - template.suffix.length));
    throw tenantRefused(
      'iss-tenant',
      `iss names ${named === 'no tenant ID' ? named : `tenant ${named}`}, tid is ${tid}; ${expected}`,
    );
  }
  if (tenants === undefined)
    throw tenantRefused('iss-tenant', `tenant ${tid}: option "tenants" is not set, so no tenant is accepted`);
  if (!tenants(tid)) throw tenantRefused('iss-tenant', `tenant ${tid} is not allowed by option "tenants"`);
}

/**
 * The rule for `issuers` (exact issuers and templates; `source` names where they come from, for hints). A template
 * accepts a token only as itself with that token's own `tid` put in, allowed by `tenants`; with no `tenants`, no
 * token of a template is ever accepted (callers refuse that configuration before it gets here).
 */
export function issuerRule(
  issuers: readonly string[],
  tenants: TenantRule | undefined,
  source = 'option "issuer"',
): IssuerRule {
  const exact = new Set(issuers.filter((issuer) => !isIssuerTemplate(issuer)));
  const templates = issuers.filter(isIssuerTemplate).map(templateOf);
  return {
    issuers,
    names: (iss) => exact.has(iss) || templates.some((template) => frames(template, iss)),
    check(payload) {
      const iss = payload.iss;
      if (typeof iss === 'string' && exact.has(iss)) return;
      const framing = typeof iss === 'string' ? templates.filter((template) => frames(template, iss)) : [];
      if (framing.length === 0) throw issuerRefused(issuers, source);
      let first: unknown;
      for (const template of framing) {
        try {
          checkTenant(template, iss as string, payload.tid, tenants);
          return;
        } catch (err) {
          first ??= err;
        }
      }
      throw first;
    },
  };
}
