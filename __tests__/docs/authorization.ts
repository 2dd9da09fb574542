// Drivers of docs/authorization.md's code blocks (see __tests__/fixtures/doc-run.ts): the page's API runs against
// the package's own test issuer (discovery on loopback), with tokens shaped as the page says; the MCP gate against
// the MCP fixture's oidc-provider.
import { createTestIssuer } from '../../lib/testing';
import { call, excerpt, type DocDrivers } from '../fixtures/doc-run';
import { authorizationServer, callTool, token as mcpToken } from './mcp';

export const drivers: DocDrivers = {
  'authorization-routes': {
    async run(t) {
      const issuer = t.own(await createTestIssuer({ discovery: true, audience: 'orders-api' }));
      const { issuerBaseURL } = issuer.options as { issuerBaseURL: string };
      const api = await t.serve({ replace: { "'https://sso.example.com/realms/shop'": `'${issuerBaseURL}'` } });
      /** A token of the test issuer: `scope` and the claims given, and no Shape B scopes to read instead. */
      const bearer = (claims: Record<string, unknown>) => issuer.sign({ scopes: undefined, sub: 'alice', ...claims });
      const admin = { realm_access: { roles: ['admin'] } };
      const at = (path: string, claims: Record<string, unknown>, method = 'GET') =>
        call(`${api.origin}${path}`, { method, token: bearer(claims) });

      expect((await at('/orders/1', { scope: 'orders:write', ...admin }, 'DELETE')).status).toBe(204);
      expect((await at('/orders/1', { scope: 'orders:admin', ...admin }, 'DELETE')).status).toBe(204);
      const noRole = await at('/orders/1', { scope: 'orders:write', realm_access: { roles: ['clerk'] } }, 'DELETE');
      expect(noRole.status).toBe(403);
      expect(noRole.body).toEqual({ status: 'error', message: 'Forbidden' });
      expect(noRole.headers.get('www-authenticate')).toBe('Bearer realm="api"');
      const noScope = await at('/orders/1', { scope: 'orders:read', ...admin }, 'DELETE');
      expect(noScope.headers.get('www-authenticate')).toContain('error="insufficient_scope", scope="orders:write"');

      expect((await at('/reports', { permissions: ['reports:admin'] })).status).toBe(200);
      expect((await at('/reports', { permissions: ['orders:read'] })).status).toBe(403);

      const tenant = { scope: 'orders:admin', tenant: 'acme', email_verified: true };
      expect((await at('/tenants/acme/orders', tenant)).status).toBe(200);
      expect((await at('/tenants/acme/orders', { ...tenant, tenant: 'globex' })).status).toBe(403);
      expect((await at('/tenants/acme/orders', { ...tenant, email_verified: 'true' })).status).toBe(403);

      const payment = {
        type: 'payment_initiation',
        actions: ['initiate', 'status', 'cancel'],
        locations: ['https://api.example.com/payments'],
        instructedAmount: { currency: 'EUR', amount: '123.50' },
      };
      expect((await at('/payments', { authorization_details: [payment] }, 'POST')).status).toBe(201);
      const elsewhere = { ...payment, locations: ['https://api.example.com/payments/'] };
      expect((await at('/payments', { authorization_details: [elsewhere] }, 'POST')).status).toBe(403);

      expect((await at('/users/alice/profile', {})).status).toBe(200);
      expect((await at('/users/bob/profile', {})).status).toBe(403);
    },
  },
  'authorization-option-error': {
    ...excerpt(`import { OptionError } from 'express-verified-user';
declare const auth: TokenAuth;
`),
  },
  'authorization-mcp': {
    async run(t) {
      const { as, run } = await authorizationServer(t);
      const server = await t.serve(run);
      expect(
        (await callTool(server.origin, 'deploy', await mcpToken(as, 'mcp:admin', { roles: ['ops'] }))).status,
      ).toBe(200);
      const noRole = await callTool(server.origin, 'deploy', await mcpToken(as, 'mcp:admin'));
      expect(noRole.status).toBe(403);
      expect(noRole.body).toEqual({ status: 'error', message: 'Forbidden' });
      expect(noRole.headers.get('www-authenticate')).toBe(
        'Bearer realm="api", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"',
      );
      // mcp:admin implies mcp:tools: the endpoint's scope is met by it alone.
      expect((await callTool(server.origin, 'whoami', await mcpToken(as, 'mcp:admin'))).status).toBe(200);
      expect(
        (await callTool(server.origin, 'billing', await mcpToken(as, 'mcp:tools', { tenant: 'acme' }))).status,
      ).toBe(200);
      const other = await mcpToken(as, 'mcp:tools', { tenant: 'acme', client_id: 'untrusted-client' });
      expect((await callTool(server.origin, 'billing', other)).status).toBe(403);
    },
  },
};
