// requireMcpAuth's per-call gates: `tools`, `resources` and `prompts`, each `{ key: scopes }`, checked at set-up;
// and the key a call is looked up by, spelt as the MCP SDK's server looks it up.
import { optionError } from '../base/option-error';
import { isObject } from '../base/values';

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

/** The three gates, keyed as `callKey` spells calls. */
export type McpGates = Readonly<Record<GateKind, ReadonlyMap<string, readonly string[]>>>;

const WHAT: Record<GateKind, string> = { tools: 'toolName', resources: 'uri', prompts: 'promptName' };

/** One gate's option, `{ key: scopes[] }`, validated (own keys only: no prototype names). */
function parseGate(gate: GateKind, input: unknown): ReadonlyMap<string, readonly string[]> {
  const entries = new Map<string, readonly string[]>();
  if (input === undefined) return entries;
  if (!isObject(input) || Array.isArray(input))
    optionError(gate, `requireMcpAuth option "${gate}" must be an object { ${WHAT[gate]}: scopes[] }`);
  for (const [key, scopes] of Object.entries(input)) {
    const option = `${gate}.${key}`;
    if (!Array.isArray(scopes) || scopes.some((s) => typeof s !== 'string'))
      optionError(option, `requireMcpAuth option "${option}" must be an array of scope strings`);
    if (gate === 'resources' && !URL.canParse(key))
      optionError(option, `requireMcpAuth option "resources" keys must be absolute URIs; "${key}" is not`);
    const spelt = callKey(gate, key);
    // Two spellings of one URI gate it with the scopes of both.
    const merged = [...(entries.get(spelt) ?? []), ...(scopes as string[])];
    entries.set(spelt, Object.freeze([...new Set(merged)]));
  }
  return entries;
}

/** The `tools`, `resources` and `prompts` options of requireMcpAuth, checked at set-up (OptionError otherwise). */
export function parseGates(options: { tools?: unknown; resources?: unknown; prompts?: unknown }): McpGates {
  return Object.freeze({
    tools: parseGate('tools', options.tools),
    resources: parseGate('resources', options.resources),
    prompts: parseGate('prompts', options.prompts),
  });
}

/** The scopes a call needs on top of the endpoint's; undefined for a call no gate names. */
export function gateScopes(gates: McpGates, call: GatedCall): readonly string[] | undefined {
  return gates[call.gate].get(callKey(call.gate, call.key));
}

/** Every scope any gate names: what a request whose calls cannot be read needs. */
export function everyGateScope(gates: McpGates): string[] {
  return [...gates.tools.values(), ...gates.resources.values(), ...gates.prompts.values()].flat();
}

/** Whether any gate names anything (else no call needs to be read). */
export function hasGates(gates: McpGates): boolean {
  return gates.tools.size + gates.resources.size + gates.prompts.size > 0;
}
