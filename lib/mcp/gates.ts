// requireMcpAuth's per-call gates: `tools`, `resources` and `prompts`, each `{ key: scopes }` or `{ key: { scopes,
// roles, claims, … } }` (a route's requirements), checked at set-up; and the key a call is looked up by, spelt as the
// MCP SDK's server looks it up.
import { optionError } from '../base/option-error';
import { knownFields, type FieldList } from '../base/option-checks';
import { isObject } from '../base/values';
import { quoted } from '../base/printable';
import type { RegisteredClaims } from '../token/claim-modes';
import { combineAuthorizations, type RouteAuthorization } from '../authorize/checks';
import type { RequirementOwner } from '../authorize/refusal';
import { REQUIREMENT_FIELDS, type RouteRequirements } from '../authorize/requirement';
import type { RequirementParser } from '../authorize/route';

/** What a JSON-RPC call reaches: a tool (`tools/call`), a resource (`resources/read`) or a prompt (`prompts/get`). */
export type GateKind = 'tools' | 'resources' | 'prompts';

/** The gated methods: the option that gates each, and the `params` field (mirrored in `Mcp-Name`) naming the key. */
export const GATED_METHODS: Readonly<Record<string, { gate: GateKind; field: 'name' | 'uri' }>> = Object.freeze({
  'tools/call': { gate: 'tools', field: 'name' },
  'resources/read': { gate: 'resources', field: 'uri' },
  'prompts/get': { gate: 'prompts', field: 'name' },
});

/** The method's gate, for methods that have one (own keys only: "constructor" is no method). */
export function gatedMethod(method: unknown): { gate: GateKind; field: 'name' | 'uri' } | undefined {
  return typeof method === 'string' && Object.hasOwn(GATED_METHODS, method) ? GATED_METHODS[method] : undefined;
}

/** One call a request makes: which gate, and the key (a tool's or prompt's name, a resource's URI). */
export interface GatedCall {
  readonly gate: GateKind;
  readonly key: string;
}

/**
 * A call's key as the SDK's server finds what it reaches: tools and prompts by their exact name; a resource by its
 * URI parsed and serialised again (`new URL(uri).href`, 1.x and 2.x alike), so `FILE:///./secret` reads
 * `file:///secret`. A URI that does not parse stays as it is (the server refuses to read it).
 */
export function callKey(gate: GateKind, key: string): string {
  if (gate !== 'resources') return key;
  try {
    return new URL(key).href;
  } catch {
    return key;
  }
}

/**
 * A tool's, resource's or prompt's requirement in place of its scope list: a route's requirements (roles, claims,
 * …, `allow`; docs/authorization.md), with the scopes it needs on top of the endpoint's as `scopes`.
 */
export interface McpCallRequirement<C extends RegisteredClaims = RegisteredClaims> extends RouteRequirements<C> {
  /** Scopes the call needs on top of the endpoint's. */
  scopes?: readonly string[];
}

/** What a call of one gated key needs on top of the endpoint's: scopes, requirements, and whose they are (hints). */
export interface GateEntry {
  readonly scopes: readonly string[];
  readonly authorization: RouteAuthorization | undefined;
  readonly owner: RequirementOwner;
}

/** The three gates, keyed as `callKey` spells calls. */
export type McpGates = Readonly<Record<GateKind, ReadonlyMap<string, GateEntry>>>;

const WHAT: Record<GateKind, string> = { tools: 'toolName', resources: 'uri', prompts: 'promptName' };
const NOUN: Record<GateKind, string> = { tools: 'tool', resources: 'resource', prompts: 'prompt' };
const CALL_FIELDS: FieldList<McpCallRequirement> = { scopes: true, ...REQUIREMENT_FIELDS };

/** Who set a gated key's requirement, as hints name it: the tool (resource, prompt), never the route. */
const ownerOf =
  (gate: GateKind, key: string): RequirementOwner =>
  (field) =>
    `${NOUN[gate]} ${quoted(key)} (requireMcpAuth option "${gate}"${field === 'scopes' ? ', with the endpoint\'s "scopes"' : ''})`;

/** Several gated keys' needs as one (a request calling several): every scope and every requirement, each once. */
export function combineGates(entries: readonly GateEntry[], owner?: RequirementOwner): GateEntry {
  const distinct = [...new Set(entries)];
  if (distinct.length === 1 && owner === undefined) return distinct[0];
  return Object.freeze({
    scopes: Object.freeze([...new Set(distinct.flatMap((entry) => entry.scopes))]),
    authorization: combineAuthorizations(distinct.map((entry) => entry.authorization)),
    owner: owner ?? ((field: string) => distinct.map((entry) => entry.owner(field)).join(' and ')),
  });
}

/** One gate's option, `{ key: scopes[] | McpCallRequirement }`, validated (own keys only: no prototype names). */
function parseGate(
  gate: GateKind,
  input: unknown,
  requirementsOf: RequirementParser['requirements'],
): ReadonlyMap<string, GateEntry> {
  const entries = new Map<string, GateEntry>();
  if (input === undefined) return entries;
  if (!isObject(input) || Array.isArray(input))
    optionError(
      gate,
      `requireMcpAuth option "${gate}" must be an object { ${WHAT[gate]}: scopes[] or { scopes, roles, … } }`,
    );
  for (const [key, given] of Object.entries(input)) {
    const option = `${gate}.${key}`;
    const owner = ownerOf(gate, key);
    let scopes: unknown = given;
    let authorization: RouteAuthorization | undefined;
    if (isObject(given)) {
      knownFields(given, CALL_FIELDS, option, 'requireMcpAuth');
      scopes = given.scopes ?? [];
      authorization = requirementsOf(given, { owner, path: option, who: 'requireMcpAuth' });
    }
    const at = isObject(given) ? `${option}.scopes` : option;
    if (!Array.isArray(scopes) || scopes.some((s) => typeof s !== 'string'))
      optionError(at, `requireMcpAuth option "${at}" must be an array of scope strings`);
    if (gate === 'resources' && !URL.canParse(key))
      optionError(option, `requireMcpAuth option "resources" keys must be absolute URIs; "${key}" is not`);
    const spelt = callKey(gate, key);
    const entry: GateEntry = Object.freeze({
      scopes: Object.freeze([...new Set(scopes as string[])]),
      authorization,
      owner,
    });
    // Two spellings of one URI gate it with the scopes and requirements of both.
    const before = entries.get(spelt);
    entries.set(spelt, before === undefined ? entry : combineGates([before, entry]));
  }
  return entries;
}

/** The `tools`, `resources` and `prompts` options of requireMcpAuth, checked at set-up (OptionError otherwise). */
export function parseGates(
  options: { tools?: unknown; resources?: unknown; prompts?: unknown },
  requirementsOf: RequirementParser['requirements'],
): McpGates {
  return Object.freeze({
    tools: parseGate('tools', options.tools, requirementsOf),
    resources: parseGate('resources', options.resources, requirementsOf),
    prompts: parseGate('prompts', options.prompts, requirementsOf),
  });
}

/** What a call needs on top of the endpoint's; undefined for a call no gate names. */
export function gateEntry(gates: McpGates, call: GatedCall): GateEntry | undefined {
  return gates[call.gate].get(callKey(call.gate, call.key));
}

/** What every gate needs: what a request whose calls cannot be read needs. */
export function everyGate(gates: McpGates): GateEntry {
  return combineGates(
    [...gates.tools.values(), ...gates.resources.values(), ...gates.prompts.values()],
    () =>
      'every gated tool, resource and prompt (requireMcpAuth options "tools", "resources", "prompts": the calls of this request could not all be read)',
  );
}

/** Whether any gate names anything (else no call needs to be read). */
export function hasGates(gates: McpGates): boolean {
  return gates.tools.size + gates.resources.size + gates.prompts.size > 0;
}
