// What the official MCP conformance suite (@modelcontextprotocol/conformance) calls on a server under test: its
// fixture tools, resources and prompts, by the names and contents the suite's scenarios check, written for either
// SDK line's McpServer (1.x `@modelcontextprotocol/sdk`, 2.x `@modelcontextprotocol/server`). Registered by
// server.mjs when it runs for conformance.mjs.
import { z } from 'zod';

// A 1×1 PNG and a short silent WAV, Base64.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const WAV = Buffer.concat([
  Buffer.from('RIFF', 'ascii'),
  Buffer.from([40, 0, 0, 0]),
  Buffer.from('WAVEfmt ', 'ascii'),
  Buffer.from([16, 0, 0, 0, 1, 0, 1, 0, 0x40, 0x1f, 0, 0, 0x40, 0x1f, 0, 0, 1, 0, 8, 0]),
  Buffer.from('data', 'ascii'),
  Buffer.from([4, 0, 0, 0, 128, 128, 128, 128]),
]).toString('base64');

const text = (value) => ({ type: 'text', text: value });
const image = { type: 'image', data: PNG, mimeType: 'image/png' };
const embedded = (uri, mimeType, value) => ({ type: 'resource', resource: { uri, mimeType, text: value } });
const asUser = (content) => ({ messages: [{ role: 'user', content }] });

const TOOLS = {
  test_simple_text: () => [text('This is a simple text response for testing.')],
  test_image_content: () => [image],
  test_audio_content: () => [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }],
  test_embedded_resource: () => [
    embedded('test://embedded-resource', 'text/plain', 'This is an embedded resource content.'),
  ],
  test_multiple_content_types: () => [
    text('Multiple content types test:'),
    image,
    embedded('test://mixed-content-resource', 'application/json', JSON.stringify({ test: 'data', value: 123 })),
  ],
};

/**
 * Register the suite's fixtures on `server`; `ResourceTemplate` is that SDK line's class. Tools take an empty
 * object schema, so both lines call them as `(args, extra)`.
 */
export function registerConformanceFixtures(server, ResourceTemplate) {
  for (const [name, content] of Object.entries(TOOLS))
    server.registerTool(name, { description: name, inputSchema: z.object({}) }, async () => ({ content: content() }));
  server.registerTool(
    'test_error_handling',
    { description: 'answers a tool error', inputSchema: z.object({}) },
    async () => ({ isError: true, content: [text('This tool intentionally returns an error for testing')] }),
  );
  server.registerResource('static-text', 'test://static-text', { mimeType: 'text/plain' }, async () => ({
    contents: [
      { uri: 'test://static-text', mimeType: 'text/plain', text: 'This is the content of the static text resource.' },
    ],
  }));
  server.registerResource('static-binary', 'test://static-binary', { mimeType: 'image/png' }, async () => ({
    contents: [{ uri: 'test://static-binary', mimeType: 'image/png', blob: PNG }],
  }));
  server.registerResource(
    'template',
    new ResourceTemplate('test://template/{id}/data', { list: undefined }),
    { mimeType: 'application/json' },
    async (uri, { id }) => ({
      contents: [
        {
          uri: uri.toString(),
          mimeType: 'application/json',
          text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
        },
      ],
    }),
  );
  server.registerPrompt('test_simple_prompt', { description: 'no arguments' }, async () =>
    asUser(text('This is a simple prompt for testing.')),
  );
  server.registerPrompt(
    'test_prompt_with_arguments',
    { description: 'two arguments', argsSchema: { arg1: z.string(), arg2: z.string() } },
    async ({ arg1, arg2 }) => asUser(text(`Prompt with arguments: arg1='${arg1}', arg2='${arg2}'`)),
  );
  server.registerPrompt(
    'test_prompt_with_embedded_resource',
    { description: 'an embedded resource', argsSchema: { resourceUri: z.string() } },
    async ({ resourceUri }) => ({
      messages: [
        { role: 'user', content: embedded(resourceUri, 'text/plain', 'Embedded resource content for testing.') },
        { role: 'user', content: text('Please process the embedded resource above.') },
      ],
    }),
  );
  server.registerPrompt('test_prompt_with_image', { description: 'an image' }, async () => ({
    messages: [
      { role: 'user', content: image },
      { role: 'user', content: text('Please analyze the image above.') },
    ],
  }));
}
